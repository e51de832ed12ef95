"""PixelDiT (``PixelDiTT2I``) and PiD (``PiD``): the adapter inside real ComfyUI, each on its model of
one patch block and one pixel block at the real width (1536, 24 heads), random weights in the
released key layout (``core.`` prefix for PixelDiT, fused pixel-block modulation), on RGB pixels.

Every prompt reaches the DiT as 300 tokens, so cond and uncond batch into one call (``b2``) and
one graph serves every prompt at a size. PiD's low-quality latent and ``degrade_sigma`` (the
PiDConditioning node's entries) are read live: other values replay the same graph, bit-equal to
eager, and change eager's output. CPU stand-in here; test_full_size_cuda.py samples both recipes.
ComfyUI 0.8.0 has neither class: these tests skip there.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/pixeldit.py`` (recipes: ``bench/recipes/pixeldit.py`` and ``pixeldit_pid.py``).
``latent_formats.PixelDiTPixel``: 3 channels, downscale 1. 14 MMDiT patch blocks (24 heads, 1536 wide) over
16-pixel patches, then 2 per-pixel PiT blocks conditioned on the patch tokens, with a Gemma-2-2B context (2304).
PiD adds a low-quality latent (``lq_latent``, a Flux, SD3, Qwen-Image or FLUX.2 latent of the image to decode at
4x) projected to one sigma-gated feature before every second patch block and one before the pixel blocks, and
``degrade_sigma`` (a tensor), both from the PiDConditioning node (``comfy_extras/nodes_pid.py:48-50``) through
``model_base.PiD.extra_conds`` (model_base.py:1581-1589). The tokenizer pads to 300 tokens and the encoder cuts
longer ones (``comfy/text_encoders/pixeldit.py:56-66, :85-89``); the attention mask
(``model_base.PixelDiTT2I.extra_conds``, model_base.py:1568-1573) is an argument the forward does not use (the
blocks get ``None``, pixeldit/model.py:222). Read for host syncs and value-dependent branches
(comfy/ldm/pixeldit/):

- model.py:203-243 ``_forward``: ``pad_to_patch_size``, patch counts, ``unfold`` / ``fold`` and
  the text length ``min(context.shape[1], txt_max_length)`` from shapes; ``_fetch_patch_pos`` /
  ``_fetch_text_pos`` (l.186-189) and ``precompute_freqs_cis_2d`` (modules.py:13-40): ``linspace``
  / ``arange`` on the device from shapes and ``rope_options`` (Python numbers, in the key by
  options.py); PiD's NTK factors (modules.py:27-31) are Python floats from shapes.
- modules.py:155-187 ``PiTBlock.forward``: the MLP runs in ``mlp_chunks`` slices of a
  shape-derived size (a Python loop over shapes).
- pid.py:234-263 ``PidNet._forward``: the LQ channel check raises on a shape; ``degrade_sigma``
  is moved, reshaped and expanded on the device by shape (l.252-254); ``LQProjection2D``
  (pid.py:120-155) resizes the LQ latent to the patch grid with ``interpolate`` by shapes;
  ``SigmaAwareGate`` (pid.py:27-33) reads ``log_alpha``, a parameter, on the device.
- No ``.item()``, ``.tolist()``, ``.cpu()`` or mask indexing, so mode 'full' is safe.
  ``PixDiT_T2I.forward`` (model.py:191) runs ``_forward`` through the DIFFUSION_MODEL
  ``WrapperExecutor`` (PidNet overrides ``_forward`` only).
- Checkpoint layout: released files prefix the PixelDiT keys with ``core.`` (detection looks for
  ``core.pixel_embedder.proj.weight``, model_detection.py:573) and fuse each pixel block's msa and
  mlp modulation into one ``adaLN_modulation.0`` Linear, which ``PixelDiTT2I.process_unet_state_dict``
  splits at load (supported_models.py:1263-1286); the recipes build that layout
  (``released_layout`` in ``bench/recipes/pixeldit.py``).
"""

import gc

import pytest
import torch
from bcg_testing import (
    check_conditioning_inputs_are_read_live,
    check_gpu_verification_state,
    check_padded_prompts_batch_cond_and_uncond,
    skip_unless_host_builds,
)

from bench import synthetic

pytestmark = pytest.mark.comfy


@pytest.fixture(scope="module")
def recipe_model():
    """``recipe_model(recipe)``: that recipe's depth-1 model, one held at a time."""
    held = {}

    def get(recipe):
        if recipe not in held:
            held.clear()
            gc.collect()
            skip_unless_host_builds(recipe)
            held[recipe] = synthetic.load_model(recipe, depth=1, seed=0)
        return held[recipe]

    yield get
    held.clear()
    gc.collect()


def test_the_released_layout_is_what_comfyui_detects_and_splits(pack):
    """The file's keys differ from the module tree's (``core.`` prefix, one fused modulation Linear
    per pixel block): ComfyUI detects that layout as PixelDiTT2I and its
    ``process_unet_state_dict`` gives back exactly the module tree's keys and shapes (the values'
    round trip is checked by every load: ``synthetic.load_model`` compares each loaded key)."""
    import comfy.supported_models

    skip_unless_host_builds("pixeldit")
    info = synthetic.family_info("pixeldit")
    tree = synthetic.state_dict_shapes("pixeldit", depth=1)
    released = info.checkpoint_layout(info, {k: torch.empty(s, dtype=torch.bfloat16) for k, s in tree.items()})
    assert "core.pixel_embedder.proj.weight" in released and not any(".adaLN_modulation_msa." in k for k in released), (
        sorted(released)[:5]
    )
    cls, _ = synthetic.detect_family_class({k: v.to("meta") for k, v in released.items()})
    assert cls == "PixelDiTT2I"
    split = comfy.supported_models.PixelDiTT2I({"image_model": "pixeldit_t2i"}).process_unet_state_dict(released)
    assert {k: tuple(v.shape) for k, v in split.items()} == tree


def test_served_without_opt_in_once_verified_on_the_h200(pack, recipe_model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], recipe_model("pixeldit"), "pixeldit", monkeypatch)


def test_every_prompt_is_300_tokens_so_cond_and_uncond_share_one_graph(pack, recipe_model, standin_graphs):
    check_padded_prompts_batch_cond_and_uncond(
        pack[1], recipe_model("pixeldit"), "pixeldit", shapes=[(1, 3, 64, 64)], length=300
    )


def test_pid_reads_its_low_quality_latent_and_degrade_sigma_live(pack, recipe_model, standin_graphs):
    def lq(seed):
        gen = torch.Generator().manual_seed(seed)
        return {"lq_latent": torch.randn(1, 16, 2, 2, generator=gen), "degrade_sigma": torch.tensor([0.1 * seed])}

    check_conditioning_inputs_are_read_live(pack[1], recipe_model("pixeldit_pid"), "pixeldit_pid", lq)
