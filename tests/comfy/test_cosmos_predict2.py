"""Cosmos-Predict2 text-to-image (``CosmosT2IPredict2``): the adapter inside real ComfyUI, on a
depth-1 2B-shaped model at the real width (2048; one block).

The T5 tokenizer pads every prompt to 512 tokens, so cond and uncond arrive equally long and batch
into one call (``txt512 b2``), and cfg 1 sends the positive alone (``b1``): two graphs per size. An
image is one latent frame (Wan 2.1's 5-D latent, T = 1), labelled without frames. A tensor ``fps``
(which the RoPE would compare on the host) runs eager with the reason. The family stays off for
users until its GPU exactness test has passed, unless they opt in. CPU stand-in here;
test_full_size_cuda.py samples the full model. Cosmos-Predict2 exists in ComfyUI 0.8.0 and 0.33.0:
these tests run on both.
"""

import pytest
import torch
from bcg_testing import (
    check_an_unwarmed_size_falls_back_with_its_label,
    check_gpu_verification_state,
    check_padded_prompts_batch_cond_and_uncond,
    conds,
    sample_both,
    session_of,
)

from bcg_runtime.comfy.models.cosmos_predict2 import TENSOR_FPS_REFUSAL

pytestmark = pytest.mark.comfy
FAMILY = "cosmos_predict2"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_padded_prompts_batch_cond_and_uncond_and_replay_exactly(pack, model, standin_graphs):
    check_padded_prompts_batch_cond_and_uncond(pack[1], model, FAMILY, shapes=((1, 16, 1, 8, 8),))


def test_a_tensor_fps_runs_eager_with_the_reason(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    positive, _ = conds(FAMILY)
    cond = [[positive[0][0], {**positive[0][1], "frame_rate": torch.tensor([24.0])}]]
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, cond, cond, seed=3)
    assert torch.equal(out, eager)
    run = session_of(bcg_model).last_run
    assert run["eager"] == {TENSOR_FPS_REFUSAL: 2} and run["replayed"] == 0, run


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    check_an_unwarmed_size_falls_back_with_its_label(pack[1], model, FAMILY, tokens=512)
