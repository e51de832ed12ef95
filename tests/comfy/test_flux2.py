"""FLUX.2 (``Flux2``): the adapter inside real ComfyUI, on a depth-1 klein-shaped model.

ComfyUI pads every FLUX.2 context to 512 tokens before the DiT, so prompts of different lengths
share one graph, cond and uncond batch into one call, and only a prompt longer than 512 tokens is
a new signature. Labels count pixels at 16 per latent cell.
CPU stand-in here; on the H200 the same tests run on real graphs (scripts/gpu_suite.sh), and
test_full_size_cuda.py samples the full-depth model at 512² and 1024².
"""

import pytest
import torch
from bcg_testing import WARMUP_ONLY, check_gpu_verification_state, conds, session_of

from bcg_runtime.comfy import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "flux2"
FIRST = "first call, captured"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_prompts_up_to_512_tokens_share_one_graph_and_replay_exactly(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    assert session.config.mode.value == "full"
    positive, negative = conds(FAMILY)  # 300 and 77 tokens: both arrive as 512
    out = synthetic.sample(bcg_model, FAMILY, 64, 64, 3, 2.0, positive, negative, seed=3)
    assert torch.equal(out, synthetic.sample(model, FAMILY, 64, 64, 3, 2.0, positive, negative, seed=3))
    run = session.last_run
    assert run["calls"] == 3 and run["replayed"] == 2, run
    assert run["eager"] == {f"{FIRST}: 64x64 txt512 b2": 1}, run

    # Other prompt lengths under 512: the same graph, nothing new captured.
    other_pos, other_neg = synthetic.make_conditioning(FAMILY, 100, seed=5), synthetic.make_conditioning(FAMILY, 12, seed=6)
    out = synthetic.sample(bcg_model, FAMILY, 64, 64, 3, 2.0, other_pos, other_neg, seed=4)
    assert torch.equal(out, synthetic.sample(model, FAMILY, 64, 64, 3, 2.0, other_pos, other_neg, seed=4))
    assert session.last_run["replayed"] == 3 and session.runner.stats.captures == 1

    # A prompt longer than 512 tokens keeps its length: its own signature, at cfg 1.
    long = synthetic.make_conditioning(FAMILY, 600, seed=7)
    out = synthetic.sample(bcg_model, FAMILY, 64, 64, 3, 1.0, long, long, seed=5)
    assert torch.equal(out, synthetic.sample(model, FAMILY, 64, 64, 3, 1.0, long, long, seed=5))
    assert session.last_run["eager"] == {f"{FIRST}: 64x64 txt600 b1": 1}, session.last_run


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    positive, negative = conds(FAMILY)
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, negative).args
    assert "replay exact" in report, report
    out = synthetic.sample(warmed, FAMILY, 96, 64, 2, 1.0, positive, negative, seed=3)
    assert torch.equal(out, synthetic.sample(model, FAMILY, 96, 64, 2, 1.0, positive, negative, seed=3))
    assert session_of(warmed).last_run["eager"] == {"not captured: 96x64 txt512 b1": 2}, session_of(warmed).last_run
