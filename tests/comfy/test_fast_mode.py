"""Mode fast inside real ComfyUI: Z-Image's repeated blocks (``layers`` and the two refiners)
compiled with inductor under the capture, one graph per shape, on a depth-1 model.

CPU stand-in here (inductor's CPU backend compiles the blocks; the stand-in records and replays
the forward): the plumbing, the report, the restored model. On the H200 the same test captures
real CUDA graphs over Triton kernels, and the benchmark (``--modes fast``) measures the speed."""

import pytest
import torch
from bcg_testing import WARMUP_ONLY, conds, sample_both, session_of

from bcg_runtime.comfy.fast import NOT_BIT_EXACT, repeated_block_lists

pytestmark = pytest.mark.comfy
FAMILY = "zimage"


def test_fast_mode_replays_its_compiled_graphs_and_says_it_is_not_bit_exact(pack, model, standin_graphs):
    _, nodes = pack
    positive, negative = conds(FAMILY)
    dit = model.model.diffusion_model
    blocks = {name: list(members) for name, members in repeated_block_lists(dit)}
    assert set(blocks) >= {"layers", "noise_refiner", "context_refiner"}, set(blocks)
    _, eager_before = sample_both(FAMILY, model, model, 64, 64, 2, 2.0, positive, negative, seed=3)

    (fast,) = nodes["BCGApply"].execute(model, "fast", capture=WARMUP_ONLY).args
    fast, text = nodes["BCGWarmupCapture"].execute(fast, "64x64", "", "1,2", positive, negative).args
    report = session_of(fast).last_warmup
    print(text)
    captured = [r for r in report["records"] if r["status"] == "captured"]
    assert len(captured) == 2 and all(r["exact"] for r in report["records"]), text  # cond 40 and uncond 17 tokens
    assert all(r["eager_diff"] is not None for r in captured), captured
    assert f"{NOT_BIT_EXACT}: max abs diff" in text

    out, eager = sample_both(FAMILY, fast, model, 64, 64, 2, 2.0, positive, negative, seed=3)
    session = session_of(fast)
    assert session.last_run["state"] == "replayed", session.last_run
    assert out.shape == eager.shape and torch.isfinite(out).all()
    # The shared model is left as loaded: its blocks are the originals, and eager sampling is
    # bit-equal to eager sampling before fast mode ran.
    assert all(list(members) == blocks[name] for name, members in repeated_block_lists(dit))
    assert torch.equal(eager, eager_before)

    # an unwarmed shape runs the plain forward with its reason: no compile outside a capture
    from torch._dynamo.utils import counters

    graphs_before = counters["stats"]["unique_graphs"]
    sample_both(FAMILY, fast, model, 64, 96, 1, 1.0, positive, negative, seed=4)
    assert session.last_run["state"] == "off" and any("not captured" in r for r in session.last_run["eager"]), session.last_run
    assert counters["stats"]["unique_graphs"] == graphs_before, "dynamo compiled during sampling"


def test_a_mode_that_does_not_exist_names_the_accepted_ones(pack, model):
    _, nodes = pack
    with pytest.raises(ValueError, match="accepted: auto, breakable, full, fast"):
        nodes["BCGApply"].execute(model, "fastest")
