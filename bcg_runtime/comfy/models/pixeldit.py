"""PixelDiT (``PixelDiTT2I``; ``comfy.ldm.pixeldit.model.PixDiT_T2I``) and PiD, the Pixel Diffusion
Decoder (``PiD``; ``comfy.ldm.pixeldit.pid.PidNet``, a ``PixDiT_T2I`` subclass), ComfyUI 0.33.0
only (0.8.0 has neither class: their tests skip there). One adapter serves both; PiD's module is
``pixeldit_pid.py`` (the recipes: ``bench/recipes/pixeldit.py`` and ``pixeldit_pid.py``).

A pixel-space DiT: no VAE, the "latent" is the RGB image (``latent_formats.PixelDiTPixel``: 3
channels, downscale 1), so ``latent_scale`` is 1 and labels count pixels. 14 MMDiT patch blocks
(24 heads, 1536 wide) over 16-pixel patches, then 2 per-pixel PiT blocks conditioned on the patch
tokens, with a Gemma-2-2B context (2304). PiD adds a low-quality latent (``lq_latent``, a Flux,
SD3, Qwen-Image or FLUX.2 latent of the image to decode at 4x) projected to one sigma-gated
feature before every second patch block and one before the pixel blocks, and ``degrade_sigma``
(a tensor), both from the PiDConditioning node (``comfy_extras/nodes_pid.py:48-50``) through
``model_base.PiD.extra_conds`` (model_base.py:1581-1589): tensor arguments, in the key by shape
and read live at every replay.

Text: the PixelDiT Gemma-2 tokenizer pads every prompt to 300 tokens and the encoder cuts longer
ones to 300 (``comfy/text_encoders/pixeldit.py:56-66, :85-89``): every prompt reaches the DiT as a
300-long context, so cond and uncond batch into one call. The attention mask it passes
(``model_base.PixelDiTT2I.extra_conds``, model_base.py:1568-1573) is an argument the forward does
not use (the blocks get ``None``, pixeldit/model.py:222).

Read for host syncs and value-dependent branches (0.33.0, comfy/ldm/pixeldit/):

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

Checkpoint layout: released files prefix the PixelDiT keys with ``core.`` (detection looks for
``core.pixel_embedder.proj.weight``, model_detection.py:573) and fuse each pixel block's msa and
mlp modulation into one ``adaLN_modulation.0`` Linear, which ``PixelDiTT2I.process_unet_state_dict``
splits at load (supported_models.py:1263-1286); the recipes build that layout
(``released_layout`` in ``bench/recipes/pixeldit.py``).
"""

import torch

from .base import ModelAdapter, WarmupFacts

#: Every prompt's context length at the DiT (padded, or cut, to 300 tokens).
CONTEXT_LENGTH = 300

ADAPTER = ModelAdapter(
    family="pixeldit",
    display_name="PixelDiT",  # PiD included: the same forward with the LQ branch
    config_classes=("PixelDiTT2I", "PiD"),
    max_text_length=CONTEXT_LENGTH,
    text_policy="one bucket, exact: the Gemma-2 tokenizer pads (and the encoder cuts) every prompt to 300 tokens",
    latent_scale=1,
)


def _pixeldit_extras(facts, batch, length, generator, guidance):
    """``PixelDiTGemma2TE.encode_token_weights``: no pooled output, the attention mask over the 300
    tokens (all ones here; the DiT does not read it)."""
    return {"pooled_output": None, "attention_mask": torch.ones(batch, length, dtype=torch.long)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=2304,
    pooled_dim=None,
    default_cond_length=CONTEXT_LENGTH,
    latent_channels=3,
    conditioning_extras=_pixeldit_extras,
)
