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
from bcg_testing import WARMUP_ONLY, check_gpu_verification_state, conds, sample_both, session_of

from bcg_runtime.comfy import synthetic
from bcg_runtime.comfy.models.cosmos_predict2 import TENSOR_FPS_REFUSAL

pytestmark = pytest.mark.comfy
FAMILY = "cosmos_predict2"
FIRST = "first call, captured"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_padded_prompts_batch_cond_and_uncond_and_replay_exactly(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    assert session.config.mode.value == "full"
    positive, negative = conds(FAMILY)
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 3, 2.0, positive, negative, seed=3)
    assert out.shape == (1, 16, 1, 8, 8) and torch.equal(out, eager)
    run = session.last_run
    assert run["calls"] == 3 and run["replayed"] == 2 and run["eager"] == {f"{FIRST}: 64x64 txt512 b2": 1}, run
    other_pos, other_neg = synthetic.make_conditioning(FAMILY, 512, seed=5), synthetic.make_conditioning(FAMILY, 512, seed=6)
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 3, 2.0, other_pos, other_neg, seed=4)
    assert torch.equal(out, eager)
    assert session.last_run["replayed"] == 3 and session.runner.stats.captures == 1, session.last_run
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 3, 1.0, other_pos, other_neg, seed=5)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64 txt512 b1": 1} and session.last_run["replayed"] == 2, session.last_run


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
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    positive, negative = conds(FAMILY)
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, negative).args
    assert "64x64 txt512 b1: captured" in report and "NOT exact" not in report, report
    out, eager = sample_both(FAMILY, warmed, model, 64, 64, 2, 1.0, positive, negative, seed=3)
    assert torch.equal(out, eager)
    assert session_of(warmed).last_run["replayed"] == 2, session_of(warmed).last_run
    out, eager = sample_both(FAMILY, warmed, model, 96, 64, 2, 1.0, positive, negative, seed=3)
    assert torch.equal(out, eager)
    assert session_of(warmed).last_run["eager"] == {"not captured: 96x64 txt512 b1": 2}, session_of(warmed).last_run
