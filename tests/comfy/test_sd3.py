"""SD3 / SD3.5 (``SD3``, an MMDiT): the adapter inside real ComfyUI, on a depth-1 model.

MMDiT's forward runs no DIFFUSION_MODEL wrapper itself: BCG Apply routes it through BCG's hook by
an object patch on its clone, so these tests first show that BCG sees SD3's calls at all, and that
the model outside the clone runs untouched. The context is CLIP-L/G then T5 with no mask, so each
length is its own graph: a 120-token T5 prompt (197) and the empty negative (154) are two batch-1
calls per step; cond and uncond of one length batch into one call. Depth sets the width too
(hidden = 64 x depth): depth 1 is a 64-wide, one-block model. CPU stand-in here; on the H200 the
same tests run on real graphs, and test_full_size_cuda.py samples SD3.5 Large at 512² and 1024².

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/sd3.py``, read for host syncs and value-dependent branches in ``mmdit.py``: none.
``cropped_pos_embed`` (lines 892-918) and ``unpatchify`` (920-938) branch and assert on Python ints from
``x.shape``; ``PatchEmbed`` pads by shape (100-107); ``forward_core_with_concat`` (940-988) branches on
``register_length`` (a constant, 0 for SD3), on ``patches_replace`` (any patch makes the call eager, options.py)
and on ``control``'s structure (its tensors are arguments, in the key); ``block_mixing`` (603-610) checkpoints only
under ``use_checkpoint`` (False at inference). Attention goes through ``optimized_attention`` with the call's
``transformer_options`` (``_block_mixing``, 625/641), so the attention break covers it. The CLIP-L/G part of the
context is zero-padded from 2048 to 4096 channels. Detection reads ``depth`` = hidden width / 64 and builds that
many blocks (it counts no blocks), so fewer blocks means a narrower model (``MMDiTFamilyInfo`` in
``bench/recipes/sd3.py``).
"""

import pytest
import torch
from bcg_testing import WARMUP_ONLY, check_gpu_verification_state, conds, session_of

from bench import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "sd3"
FIRST = "first call, captured"


def _routed(model) -> bool:
    """Whether the shared diffusion model's ``forward`` is now BCG's routing object patch."""

    from bcg_runtime.comfy.hooks import _ForwardThroughBCG as shim

    return isinstance(model.model.diffusion_model.__dict__.get("forward"), shim)


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


@pytest.mark.parametrize("mode", ["full", "breakable"])
def test_each_context_length_is_its_own_graph_and_replays_exactly(pack, model, standin_graphs, mode):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, mode).args
    session = session_of(bcg_model)
    assert session.config.mode.value == mode
    positive, negative = conds(FAMILY)  # 197 and 154 tokens: two calls per step
    out = synthetic.sample(bcg_model, FAMILY, 64, 64, 3, 4.5, positive, negative, seed=3)
    assert _routed(model)
    eager = synthetic.sample(model, FAMILY, 64, 64, 3, 4.5, positive, negative, seed=3)
    assert not _routed(model), "the routing patch outlived the BCG clone's sampling"
    assert torch.equal(out, eager)
    run = session.last_run
    assert run["calls"] == 6 and run["replayed"] == 4, run
    assert run["eager"] == {f"{FIRST}: 64x64 txt197 b1": 1, f"{FIRST}: 64x64 txt154 b1": 1}, run

    # Another prompt of the same length at cfg 1 (cond only): replayed, nothing new captured.
    other = synthetic.make_conditioning(FAMILY, 197, seed=5)
    out = synthetic.sample(bcg_model, FAMILY, 64, 64, 3, 1.0, other, negative, seed=4)
    assert torch.equal(out, synthetic.sample(model, FAMILY, 64, 64, 3, 1.0, other, negative, seed=4))
    assert session.last_run["calls"] == session.last_run["replayed"] == 3 and session.runner.stats.captures == 2

    # Cond and uncond of one length (154, CLIP + a short T5 prompt) batch into one call: a new signature.
    short_pos, short_neg = (synthetic.make_conditioning(FAMILY, 154, seed=s) for s in (6, 7))
    out = synthetic.sample(bcg_model, FAMILY, 64, 64, 3, 4.5, short_pos, short_neg, seed=5)
    assert torch.equal(out, synthetic.sample(model, FAMILY, 64, 64, 3, 4.5, short_pos, short_neg, seed=5))
    assert session.last_run["eager"] == {f"{FIRST}: 64x64 txt154 b2": 1}, session.last_run
    assert session.last_run["replayed"] == 2


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    positive, negative = conds(FAMILY)
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, negative).args
    assert "replay exact" in report, report
    out = synthetic.sample(warmed, FAMILY, 96, 64, 2, 1.0, positive, negative, seed=3)
    assert torch.equal(out, synthetic.sample(model, FAMILY, 96, 64, 2, 1.0, positive, negative, seed=3))
    assert session_of(warmed).last_run["eager"] == {"not captured: 96x64 txt197 b1": 2}, session_of(warmed).last_run
