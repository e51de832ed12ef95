"""Synthetic FLUX.1-dev / Z-Image / Qwen-Image / FLUX.2 checkpoints load as the real ComfyUI models and sample.

Depth-1 models on CPU (fp32, as ComfyUI picks under --cpu; on CUDA the family's half dtype):
detection, key layout, and KSampler-path sampling (2 steps, 64x64) with cfg 1 and cfg 2, each run
twice with the same seed (must be equal).
"""

import gc
import operator

import pytest
import torch

from bcg_testing import skip_unless_host_builds

from bench import synthetic
from bcg_runtime.comfy.models import adapter_for

pytestmark = pytest.mark.comfy

FAMILY_NAMES = sorted(synthetic.FAMILIES)
WIDTH = HEIGHT = 64
STEPS = 2


def cond_lengths(family):
    """(positive, negative) context lengths: Flux's T5 pads to 256; the Qwen encoders do not pad
    (FLUX.2's model pads contexts to 512 itself)."""
    return (256, 256) if family == "flux" else (40, 17)


#: Families whose ComfyUI latent format keeps ``LatentFormat``'s default ratio (8) although their
#: latent is not 8x: (that ratio, why). The adapter's scale is the one labels and empty latents use.
INHERITED_RATIO = {
    "hunyuan_image21_refiner": (8, "latent_formats.HunyuanImage21Refiner sets no ratio; HunyuanRefinerLatent is 16x"),
}


@pytest.fixture(scope="module", params=FAMILY_NAMES)
def family_model(request):
    """(family, ModelPatcher) at the recipe's smallest depth (1 for most), loaded once per family and unloaded after its tests."""
    import comfy.model_management

    family = request.param
    skip_unless_host_builds(family)
    model = synthetic.load_model(family, depth=synthetic.family_info(family).smallest_depth, seed=0)
    yield family, model
    del model
    comfy.model_management.unload_all_models()
    comfy.model_management.cleanup_models_gc()
    gc.collect()


def test_detected_model_class_and_layout(family_model):
    family, model = family_model
    info = synthetic.family_info(family)
    base = model.model
    assert type(base.model_config).__name__ == info.supported_model
    assert type(base).__name__ == info.model_base
    assert type(base.latent_format).__name__ == info.latent_format
    assert base.latent_format.latent_channels == synthetic.latent_channels(family) == info.latent_channels
    # 0.8.0's latent formats have no ratio attribute (its HunyuanVideo 1.5 latent is 16x all the
    # same): there the adapter's scale for this model, which labels use, is checked alone.
    if hasattr(base.latent_format, "spacial_downscale_ratio"):
        ratio = base.latent_format.spacial_downscale_ratio
        assert ratio == INHERITED_RATIO.get(family, (info.latent_downscale,))[0]
    assert adapter_for(model).latent_scale == info.latent_downscale
    dm = base.diffusion_model
    assert type(dm).__name__ == info.ldm_class.split(":")[1]
    for attr, count in zip(info.block_attrs, info.depth_counts(info.smallest_depth)):
        assert len(operator.attrgetter(attr)(dm)) == count, attr  # a dotted path: LTX-2's connector blocks
    loaded = {k: tuple(v.shape) for k, v in dm.state_dict().items()}
    assert loaded == synthetic.state_dict_shapes(family, depth=info.smallest_depth)
    # ComfyUI's choice under --cpu is fp32 for every parameter. On a GPU with fp16 and bf16 (any
    # CUDA machine these tests run on) it is the first half type in the family's supported
    # inference dtypes (fp16 for SD3, Wan, HunyuanVideo 1.5, OmniGen2; bf16 for most), whatever
    # the checkpoint's dtype; a few classes build some parameters in float32 on purpose (Wan's
    # patch embedding, HunyuanVideo 1.5's cond_type_embedding, Chroma Radiance's NeRF image embedder).
    dtypes = {p.dtype for p in dm.parameters()}
    if model.load_device.type == "cpu":
        assert dtypes == {torch.float32}
    else:
        supported = base.model_config.supported_inference_dtypes
        want = next(dt for dt in supported if dt in (torch.float16, torch.bfloat16))
        assert dm.dtype == want
        assert want in dtypes and dtypes <= {want, torch.float32}, dtypes


@pytest.mark.parametrize("cfg", [1.0, 2.0], ids=["cfg1", "cfg2"])
def test_sample_finite_shape_and_deterministic(family_model, cfg):
    family, model = family_model
    n_pos, n_neg = cond_lengths(family)
    positive = synthetic.make_conditioning(family, n_pos, seed=1)
    negative = synthetic.make_conditioning(family, n_neg, seed=2)

    def run():
        return synthetic.sample(model, family, WIDTH, HEIGHT, STEPS, cfg, positive, negative, seed=123)

    first = run()
    second = run()
    assert tuple(first.shape) == synthetic.output_latent_shape(family, WIDTH, HEIGHT)
    assert first.dtype == torch.float32
    assert torch.isfinite(first).all()
    assert first.abs().max() > 0
    assert torch.equal(first, second)


#: Families whose text encoder node returns an all-ones attention mask beside the context (LLM
#: encoders: Lumina 2, Z-Image, Ideogram 4, OmniGen2, Lens, PixelDiT and PiD).
LLM_MASK = ("zimage", "zimage_pixel_space", "lumina2", "ideogram4", "omnigen2", "lens", "pixeldit", "pixeldit_pid")
#: ... a T5 mask over its padding (LTX-Video's, Cosmos 1.0's).
T5_PADDING_MASK = ("ltxv", "cosmos", "cosmos_i2v")


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_conditioning_mirrors_text_encode(family):
    info = synthetic.family_info(family)
    [[context, extras]] = synthetic.make_conditioning(family, 40, seed=3)
    assert context.shape == (1, 40, info.text_dim) and context.dtype == torch.float32
    assert context.device.type == "cpu"
    assert "pooled_output" in extras
    if family == "flux":
        assert extras["pooled_output"].shape == (1, 768)
        assert extras["guidance"] == 3.5
    elif info.pooled_dim is not None:  # the recipe's pooled width (SD3: CLIP-L + CLIP-G, 2048)
        assert extras["pooled_output"].shape == (1, info.pooled_dim)
    else:
        assert extras["pooled_output"] is None
    if family in LLM_MASK:  # LLM encoders that return their (all-ones) attention mask
        mask = extras["attention_mask"]
        assert mask.dtype == torch.long and mask.shape == (1, 40) and bool(mask.all())
    elif family in T5_PADDING_MASK:  # T5 with a mask over its padding: ones for the prompt's tokens, then zeros
        mask = extras["attention_mask"]
        assert (
            mask.dtype == torch.long
            and mask.shape == (1, 40)
            and bool(mask[0, 0])
            and bool((mask[0, :-1] >= mask[0, 1:]).all())
        )
    else:
        assert "attention_mask" not in extras
    again = synthetic.make_conditioning(family, 40, seed=3)[0][0]
    assert torch.equal(context, again)


def test_empty_latent_and_unknown_family():
    latent = synthetic.empty_latent("qwen_image", 64, 96, batch=2)
    assert latent.shape == (2, 16, 12, 8) and not latent.any()
    with pytest.raises(ValueError, match="accepted: " + ", ".join(sorted(synthetic.FAMILIES))):
        synthetic.load_model("sdxl", depth=1)
    with pytest.raises(ValueError, match="1..19"):
        synthetic.build_state_dict("flux", depth=20)


def test_checkpoints_build_whole_while_dynamic_vram_is_on(monkeypatch):
    """Under Dynamic VRAM (``comfy.memory_management.aimdo_enabled``: ComfyUI's ``main.py`` on
    NVIDIA, ``compiler_bench`` on CUDA) ComfyUI 0.33's ops build Linear and Embedding layers
    without weights; the synthetic checkpoint is still whole, is detected as FLUX.1, and the
    switch is left as it was (on the H200 this was compiler_bench's "detected the synthetic
    'flux' checkpoint as None")."""
    import comfy.ops

    memory_management = pytest.importorskip(
        "comfy.memory_management", reason="this ComfyUI has no Dynamic VRAM (0.8.0)"
    )
    eager_shapes = synthetic.state_dict_shapes("flux", depth=1)
    monkeypatch.setattr(memory_management, "aimdo_enabled", True)
    if comfy.ops.disable_weight_init.Linear(4, 4, device="meta").weight is not None:
        pytest.skip("this ComfyUI builds its Linear weights at construction under Dynamic VRAM too")
    assert synthetic.state_dict_shapes("flux", depth=1) == eager_shapes
    sd = synthetic.build_state_dict("flux", depth=1, dtype=torch.bfloat16)  # verify=True: ComfyUI's detection
    assert {k: tuple(v.shape) for k, v in sd.items()} == eager_shapes
    assert synthetic.detect_family_class(sd)[0] == "Flux"
    assert memory_management.aimdo_enabled is True
