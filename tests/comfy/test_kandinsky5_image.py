"""Kandinsky 5 Image (``Kandinsky5Image``): the Kandinsky 5 adapter class inside real ComfyUI, on
a depth-1 Image Lite model at the real width (model 2560; one text and one visual block).

Latents are 4-D (FLUX.1's, 8x), labelled without frames. Each prompt length is its own graph. A
``time_dim_replace`` (the forward's in-place write into its input, which here may be the sampler's
own latent) runs eager with the reason. The family stays off for users until its GPU exactness
test has passed, unless they opt in. CPU stand-in here; test_full_size_cuda.py samples the full
model. The model file is the same in ComfyUI 0.8.0 and 0.33.0: these tests run on both.
"""

import pytest
import torch
from bcg_testing import (
    check_an_unwarmed_size_falls_back_with_its_label,
    check_each_prompt_length_is_its_own_graph,
    check_gpu_verification_state,
    conds,
    session_of,
)

from bench import synthetic
from bcg_runtime.comfy.models.kandinsky5 import TIME_DIM_REPLACE_REFUSAL

pytestmark = pytest.mark.comfy
FAMILY = "kandinsky5_image"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_each_prompt_length_is_its_own_graph_and_replays_exactly(pack, model, standin_graphs):
    check_each_prompt_length_is_its_own_graph(pack[1], model, FAMILY)


def test_an_in_place_start_latent_runs_eager_with_the_reason(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    positive, _ = conds(FAMILY)
    start = torch.randn(1, 16, 1, 8, 8, generator=torch.Generator().manual_seed(1))
    cond = [[positive[0][0], {**positive[0][1], "time_dim_replace": start}]]
    out = synthetic.sample(bcg_model, FAMILY, 64, 64, 2, 1.0, cond, cond, seed=3)
    assert torch.equal(out, synthetic.sample(model, FAMILY, 64, 64, 2, 1.0, cond, cond, seed=3))
    run = session_of(bcg_model).last_run
    assert run["eager"] == {TIME_DIM_REPLACE_REFUSAL: 2} and run["replayed"] == 0, run


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    check_an_unwarmed_size_falls_back_with_its_label(pack[1], model, FAMILY, tokens=40)
