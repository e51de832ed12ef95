"""FLUX.2 (``Flux2``): the adapter inside real ComfyUI, on a depth-1 klein-shaped model.

ComfyUI pads every FLUX.2 context to 512 tokens before the DiT, so prompts of different lengths
share one graph, cond and uncond batch into one call, and only a prompt longer than 512 tokens is
a new signature. Labels count pixels at 16 per latent cell.
CPU stand-in here; on the H200 the same tests run on real graphs (scripts/gpu_suite.sh), and
test_full_size_cuda.py samples the full-depth model at 512² and 1024².
"""

import pytest
import torch
from bcg_testing import WARMUP_ONLY, check_gpu_verification_state, conds, session_of, skip_unless_host_builds

from bench import synthetic

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
    other_pos, other_neg = (
        synthetic.make_conditioning(FAMILY, 100, seed=5),
        synthetic.make_conditioning(FAMILY, 12, seed=6),
    )
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


def test_a_zero_config_warmup_builds_prompts_as_wide_as_this_model_s_text_encoder(pack, standin_graphs, monkeypatch):
    """FLUX.2 sizes differ in their context width (klein 4B 7680, klein 9B 12288, dev 15360): the
    warm-up from text buckets alone (no conditioning connected) builds its prompts as wide as the
    loaded model's ``txt_in`` takes, not the klein recipe's, so the shapes it captures are the ones
    sampling then sends. A klein-width model with dev's context width stands in for dev here (dev's
    own recipe, ``flux2_dev``, is 6144 wide: the full-size GPU test samples it)."""
    import dataclasses

    import comfy.model_management

    from bench.recipes import flux2
    from bench.recipe import frozen_config

    skip_unless_host_builds(FAMILY)  # built from the klein recipe (0.8.0 detects 48 heads)
    wide = dataclasses.replace(
        flux2.RECIPE,
        name="flux2_wide_text",
        facts=dataclasses.replace(flux2.RECIPE.facts, text_dim=15360),
        config=frozen_config({**flux2.RECIPE.config, "context_in_dim": 15360}),
    )
    monkeypatch.setitem(synthetic.FAMILIES, wide.name, wide)
    _, nodes = pack
    model = synthetic.load_model(wide.name, depth=1, seed=0)
    assert model.model.diffusion_model.txt_in.in_features == 15360
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    assert session_of(bcg_model).adapter.text_dim == 15360
    bcg_model, text = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "100", "1").args
    assert "64x64 txt512 b1: captured" in text and "replay exact" in text, text

    positive = synthetic.make_conditioning(wide.name, 100, seed=5)
    out = synthetic.sample(bcg_model, FAMILY, 64, 64, 2, 1.0, positive, positive, seed=4)
    assert torch.equal(out, synthetic.sample(model, FAMILY, 64, 64, 2, 1.0, positive, positive, seed=4))
    assert session_of(bcg_model).last_run["replayed"] == 2, session_of(bcg_model).last_run
    del bcg_model, model
    comfy.model_management.unload_all_models()


def test_the_flux2_dev_recipe_is_served_by_the_flux2_adapter():
    """Tests and the benchmark name recipes; ``flux2_dev`` is a second recipe of the flux2 family."""
    from bcg_runtime.comfy.models import by_family

    assert by_family("flux2_dev") is by_family("flux2")
    with pytest.raises(ValueError, match="'hidream' is not supported"):
        by_family("hidream")
