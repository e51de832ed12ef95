"""HiDream (``HiDream``) is declared unsupported (bcg_runtime/comfy/models/hidream.py says why).

Two facts are tested in real ComfyUI: the MoE feed-forward of the HiDream class routes tokens by
value (how many rows each expert computes changes with the input, so no graph can serve it), and
BCG Apply leaves a HiDream model unchanged and says it is unsupported, every DiT call eager with
that reason. Detection fixes HiDream's depth (16 + 32 blocks, hidden 2560), so these tests build a
tiny model of the same class straight from ``supported_models.HiDream`` instead of a checkpoint.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/hidream.py`` (comfy/ldm/hidream/model.py; the same file in 0.8.0):

- ``MOEFeedForwardSwiGLU.forward`` (model.py:311-318): ``MoEGate`` picks each token's top 2 of 4 experts
  (``torch.topk`` of the gate scores, 275), then ``y[flat_topk_idx == i] = expert(x[flat_topk_idx == i])``
  indexes with a boolean mask. The number of rows each expert receives depends on the activations: the mask is
  turned into indices with a device-to-host sync (``nonzero``), and the expert's matmul has a value-dependent
  shape. A CUDA graph cannot capture that (the sync is illegal during capture), and a graph frozen on one
  routing would compute another input's tokens with the wrong experts: a wrong image.
- ``moe_infer`` (327-346; unused, ``if True`` at 314 picks the path above) syncs outright:
  ``bincount().cpu().numpy()`` (331) and a Python loop over the per-expert counts.
- Detection (comfy/model_detection.py:818-835) fixes ``num_routed_experts`` = 4 for every HiDream
  checkpoint, so no real HiDream call avoids this path: a per-call ``refusal`` would send every
  call eager, i.e. BCG would do nothing while claiming support.
- Why not mode breakable: its only break is attention (``optimized_attention_override``); nothing breaks the
  graph around the MoE. A MoE break (each ``MOEFeedForwardSwiGLU`` run eagerly between two graph segments, exact
  by construction) would make the family workable; it needs a generic way for an adapter to name break modules,
  and what it saves is small (the experts, most of the FLOPs outside attention, would run eager). Also: detection
  hard-codes the depth (16 double, 32 single blocks, hidden 2560), so the synthetic-checkpoint recipe could not
  build a reduced-depth model for the CPU tests; a full-size random checkpoint is 17B parameters.
- Other spots read, harmless: ``patchify``/``unpatchify`` (679-702, 668-677) loop over ``img_sizes`` built from
  ``x.shape``; ``expand_timesteps`` (654-666) branches on tensor-ness and rank; ``_forward`` (720-829) goes
  through the DIFFUSION_MODEL ``WrapperExecutor`` (704-718).
"""

import pytest
import torch
from bcg_testing import session_of

from bcg_runtime.comfy.models import ADAPTERS, hidream

pytestmark = pytest.mark.comfy

#: A tiny HiDream: one double and one single block, 2 heads of 32, 4 experts (top 2), as detection's
#: config but narrow. Context: T5 64 wide; Llama 3.1 layers 48 wide (one per block, listed twice).
TINY = {
    "image_model": "hidream",
    "patch_size": 2,
    "in_channels": 16,
    "out_channels": 16,
    "num_layers": 1,
    "num_single_layers": 1,
    "attention_head_dim": 32,
    "num_attention_heads": 2,
    "caption_channels": [64, 48],
    "text_emb_dim": 32,
    "num_routed_experts": 4,
    "num_activated_experts": 2,
    "axes_dims_rope": [16, 8, 8],
    "max_resolution": [128, 128],
    "llama_layers": [0, 1],
}


@pytest.fixture(scope="module")
def model():
    import comfy.model_management
    import comfy.model_patcher
    import comfy.supported_models

    config = comfy.supported_models.HiDream(dict(TINY))
    config.set_inference_dtype(torch.float32, None)
    base = config.get_model({})
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, p in base.diffusion_model.named_parameters():
            p.copy_(
                torch.randn(p.shape, generator=gen) * 0.02
                + (1.0 if "norm" in name and name.endswith("weight") else 0.0)
            )
    device = comfy.model_management.get_torch_device()
    return comfy.model_patcher.ModelPatcher(
        base, load_device=device, offload_device=comfy.model_management.unet_offload_device()
    )


def _conds(length, seed):
    gen = torch.Generator().manual_seed(seed)
    extras = {
        "pooled_output": torch.randn(1, TINY["text_emb_dim"], generator=gen),
        "conditioning_llama3": torch.randn(1, 2, length, TINY["caption_channels"][1], generator=gen),
    }
    return [[torch.randn(1, length, TINY["caption_channels"][0], generator=gen), extras]]


def _sample(model, positive, negative, cfg, seed):
    import comfy.sample

    latent = torch.zeros(1, 16, 8, 8)
    noise = comfy.sample.prepare_noise(latent, seed)
    return comfy.sample.sample(
        model, noise, 2, cfg, "euler", "simple", positive, negative, latent, disable_pbar=True, seed=seed
    )


def test_the_moe_routes_tokens_by_value(model):
    """Rows per expert differ between two inputs of one shape: the expert matmuls' shapes depend
    on values (what a graph would freeze)."""
    moe = model.model.diffusion_model.double_stream_blocks[0].block.ff_i
    seen = []
    hooks = [e.register_forward_hook(lambda m, args, out: seen.append(args[0].shape[0])) for e in moe.experts]
    try:
        counts = []
        for seed in range(4):
            seen.clear()
            x = torch.randn(1, 64, moe.gate.gating_dim, generator=torch.Generator().manual_seed(seed))
            with torch.no_grad():
                moe(x)
            counts.append(tuple(seen))
    finally:
        for h in hooks:
            h.remove()
    assert all(sum(c) == 64 * moe.num_activated_experts for c in counts), counts  # every token goes to 2 experts
    assert len(set(counts)) > 1, f"routing did not change with the input: {counts}"


def test_hidream_is_no_family_and_bcg_apply_leaves_it_unchanged(pack, model):
    _, nodes = pack
    assert not hasattr(hidream, "ADAPTER") and not hasattr(hidream, "RECIPE")
    assert not any(set(a.config_classes) & set(hidream.CONFIG_CLASSES) for a in ADAPTERS)
    assert type(model.model.model_config).__name__ in hidream.CONFIG_CLASSES
    positive, negative = _conds(20, seed=1), _conds(9, seed=2)
    eager = _sample(model, positive, negative, 2.0, seed=3)
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    out = _sample(bcg_model, positive, negative, 2.0, seed=3)
    assert torch.equal(out, eager) and torch.isfinite(out).all()
    [(reason, n)] = session_of(bcg_model).last_run["eager"].items()
    assert n == 4 and "unsupported model HiDream" in reason and "mixture-of-experts" in reason, session_of(
        bcg_model
    ).last_run
    assert session_of(bcg_model).last_run["state"] == "off"
    assert not getattr(bcg_model, "weight_inplace_update", False)  # nothing about the model changed
    # BCG Warmup Capture says so too, and captures nothing
    _, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, negative).args
    assert (
        "off: unsupported model HiDream (HiDream's mixture-of-experts" in report and "BCG supports FLUX.1" in report
    ), report
