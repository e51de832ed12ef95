"""OmniGen2 (``supported_models.Omnigen2``: ``comfy.ldm.omnigen.omnigen2.OmniGen2Transformer2DModel``),
in ComfyUI 0.8.0 and 0.33.0.

A Lumina-style single-stream DiT: hidden 2520, 21 query heads over 7 key/value heads (grouped-query
attention, head 120), 32 layers, 2 blocks in each of the noise, reference-image and context
refiners, a Qwen2.5-VL-3B caption (2048), the FLUX.1 latent (16 channels at 8x, patch 2), and
reference latents (image editing) as extra token streams. Detection (0.33.0
``model_detection.py:900``) fixes every size, the depth included, so a reduced-depth test model gets
its block counts at load (``FamilyInfo.depth_fixed_by_detection``).

Text: the Qwen2.5 tokenizer does not pad; ``model_base.Omnigen2.extra_conds`` passes the context,
``num_tokens`` (a ``CONDConstant``: a Python int in the key) and the attention mask only when it
holds zeros. Caption positions are ``0..num_tokens-1`` and the image positions follow them, so each
caption length is its own graph; cond and uncond of different lengths run as two batch-1 calls.

Read for host syncs and value-dependent branches (ComfyUI 0.33.0, comfy/ldm/omnigen/omnigen2.py):

- ``model_base.py:2444-2446`` ``torch.numel(mask) != mask.sum()`` and ``.item()`` compute the mask
  policy and ``num_tokens`` in ``extra_conds``, once per conditioning, before sampling: not in the
  forward.
- ``:206-265`` the RoPE position ids: Python loops over the batch and the reference images, with
  lengths from ``num_tokens`` (in the key) and shapes; the writes are device slices.
- ``:358-376`` ``flat_and_pad_to_seq`` and ``:397-401`` the per-reference index embedding: loops
  over shapes, in-place adds on an intermediate. ``ref_latents`` is a list argument whose shapes
  are in the key.
- ``:18`` ``x.shape[1] == 0``; ``:144`` GQA flag from the config; ``:25`` in-place ``silu`` /
  ``mul_`` on intermediates.
- ``:145`` ``optimized_attention_masked`` with the context refiner's mask (only a padded batch of
  prompts sends one): a tensor argument, its values read on the device; the main layers get none.
- ``comfy_kitchen`` ``apply_rope1`` (0.8.0: plain torch): backend from shapes and dtypes. Flux's
  ``rope`` computes on the CPU only where the device has no float64 (not CUDA).

No op syncs with the host, so mode 'full' is safe. The class has no ``_forward`` (0.8.0 and
0.33.0): its ``forward`` never runs ComfyUI's DIFFUSION_MODEL wrappers, so BCG reaches its calls
through ``wrappers._ForwardThroughBCG`` (the object patch ``diffusion_model.forward``), as for SD3.
Patches (none are read by this forward) still make a call eager through ``options.py``.
"""

import torch

from .base import ModelAdapter, WarmupFacts

ADAPTER = ModelAdapter(
    family="omnigen2",
    display_name="OmniGen2",
    config_classes=("Omnigen2",),
    max_text_length=1024,
    text_policy="exact length: Qwen2.5-VL captions are unpadded and image positions follow them; each caption length is its own graph",
)


def _omnigen2_extras(facts, batch, length, generator, guidance):
    """Qwen2.5-VL-3B through CLIPTextEncode: no pooled output, an all-ones attention mask (from
    which ``model_base.Omnigen2.extra_conds`` takes ``num_tokens``, then drops it)."""
    return {"pooled_output": None, "attention_mask": torch.ones(batch, length, dtype=torch.long)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=2048,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=16,
    conditioning_extras=_omnigen2_extras,
)
