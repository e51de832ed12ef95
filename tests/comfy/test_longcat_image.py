"""LongCat-Image (``LongCatImage``): the adapter inside real ComfyUI, on a depth-1 LongCat-Image-shaped
model (FLUX.1's DiT at 3072 wide with a 3584-wide Qwen2.5-VL context, text RoPE along the prompt).

Every prompt reaches the DiT padded to 512 tokens, so cond and uncond batch into one call (``b2``)
and one graph serves every prompt at a size; cfg 1 is the batch-1 signature. An edit call's
reference latent is another signature named by its size. CPU stand-in here; test_full_size_cuda.py
samples the full-depth model. ComfyUI 0.8.0 has no LongCatImage: these tests skip there.
"""

import pytest
import torch
from bcg_testing import WARMUP_ONLY, check_gpu_verification_state, conds, sample_both, session_of

from bcg_runtime.comfy import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "longcat_image"
FIRST = "first call, captured"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_every_prompt_is_512_tokens_so_cond_and_uncond_share_one_graph(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    assert session.config.mode.value == "full"
    positive, negative = conds(FAMILY)
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 3, 2.0, positive, negative, seed=3)
    assert torch.equal(out, eager)
    run = session.last_run
    assert run["calls"] == 3 and run["replayed"] == 2 and run["eager"] == {f"{FIRST}: 64x64 txt512 b2": 1}, run

    # Other prompts and another seed: the same signature, replayed, nothing new captured.
    other_pos, other_neg = synthetic.make_conditioning(FAMILY, 512, seed=5), synthetic.make_conditioning(FAMILY, 512, seed=6)
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 3, 2.0, other_pos, other_neg, seed=4)
    assert torch.equal(out, eager)
    assert session.last_run["replayed"] == 3 and session.runner.stats.captures == 1, session.last_run

    # cfg 1: the positive alone, a batch-1 signature of its own.
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 3, 1.0, other_pos, other_neg, seed=5)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64 txt512 b1": 1} and session.last_run["replayed"] == 2, session.last_run


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    positive, negative = conds(FAMILY)
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "2", positive, negative).args
    assert "64x64 txt512 b2: captured" in report and "replay exact" in report, report
    out, eager = sample_both(FAMILY, warmed, model, 64, 64, 2, 2.0, positive, negative, seed=3)
    assert torch.equal(out, eager)
    assert session_of(warmed).last_run["replayed"] == 2, session_of(warmed).last_run
    out, eager = sample_both(FAMILY, warmed, model, 96, 64, 2, 2.0, positive, negative, seed=3)
    assert torch.equal(out, eager)
    assert session_of(warmed).last_run["eager"] == {"not captured: 96x64 txt512 b2": 2}, session_of(warmed).last_run


def test_an_edit_reference_latent_is_a_signature_named_by_its_size(pack, model, standin_graphs):
    """LongCat-Image-Edit: the ReferenceLatent node's ``reference_latents`` reach the DiT as
    ``ref_latents``: captured apart, labelled with the reference's pixel size; another image of
    that size replays without a new capture and equals eager."""
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, _ = conds(FAMILY)

    def edit(seed):
        return synthetic.with_reference_latents(positive, [synthetic.make_reference_latent(FAMILY, 64, 48, seed=seed)])

    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, edit(1), edit(1), seed=3)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64 txt512 b1 ref 64x48": 1}, session.last_run
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, edit(2), edit(2), seed=3)
    assert torch.equal(out, eager)
    assert session.last_run["replayed"] == 2 and session.runner.stats.captures == 1, session.last_run
    plain = synthetic.sample(model, FAMILY, 64, 64, 2, 1.0, positive, positive, seed=3)
    assert not torch.equal(plain, eager)  # the reference tokens change the output
