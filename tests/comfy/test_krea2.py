"""Krea 2 (``Krea2``): the adapter inside real ComfyUI, on a depth-1 Krea-2-shaped model (6144
wide, 48 query over 12 key/value heads, the full txtfusion adapter over a 12 x 2560 context).

Latents are the Qwen-Image VAE's ``[B,16,1,H,W]``; labels count pixels at 8x. The Qwen3-VL
context keeps its exact length, so cond and uncond of different lengths are two batch-1
signatures. An edit call's reference latent (with ``ref_latents_method``) is another signature,
named by its size. CPU stand-in here; test_full_size_cuda.py samples the full-depth model.
ComfyUI 0.8.0 has no Krea 2: these tests skip there.
"""

import pytest
import torch
from bcg_testing import (
    check_an_unwarmed_size_falls_back_with_its_label,
    check_each_prompt_length_is_its_own_graph,
    check_gpu_verification_state,
    conds,
    sample_both,
    session_of,
)

from bench import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "krea2"
FIRST = "first call, captured"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_each_prompt_length_is_its_own_graph_and_replays_exactly(pack, model, standin_graphs):
    check_each_prompt_length_is_its_own_graph(pack[1], model, FAMILY)


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    check_an_unwarmed_size_falls_back_with_its_label(pack[1], model, FAMILY, tokens=40, shape=(1, 16, 1, 8, 8))


def test_a_reference_latent_is_a_signature_named_by_its_size(pack, model, standin_graphs):
    """An edit conditioning (``reference_latents`` + ``reference_latents_method``
    ``index_timestep_zero``) reaches the DiT as ``ref_latents`` and ``ref_latents_method``: captured
    apart, labelled with the reference's pixel size and method; another reference image of that
    size replays without a new capture and equals eager."""
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, _ = conds(FAMILY)

    def edit(seed):
        ref = synthetic.make_reference_latent(FAMILY, 64, 48, seed=seed)
        return synthetic.with_reference_latents(positive, [ref], "index_timestep_zero")

    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, edit(1), edit(1), seed=3)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64 txt40 b1 ref 64x48 (index_timestep_zero)": 1}, (
        session.last_run
    )
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, edit(2), edit(2), seed=3)
    assert torch.equal(out, eager)
    assert session.last_run["replayed"] == 2 and session.runner.stats.captures == 1, session.last_run
    plain = synthetic.sample(model, FAMILY, 64, 64, 2, 1.0, positive, positive, seed=3)
    assert not torch.equal(plain, eager)  # the reference tokens change the output
