"""Lumina-Image 2.0 (``supported_models.Lumina2``: the Lumina2 ``NextDiT`` with dim 2304).

The same ``comfy.ldm.lumina.model.NextDiT`` as Z-Image (``zimage.py``), with the original Lumina 2
config: 24 query heads over 8 key/value heads (grouped-query attention), 26 layers, no learned pad
tokens, a Gemma-2-2B caption (2304 wide). ``ZImage`` subclasses ``Lumina2`` in ComfyUI, but
adapters match the config class by exact name, so each family keeps its own adapter.

Text: Gemma-2-2B's tokenizer does not pad (``pad_to_max_length=False``), and unlike Z-Image this
NextDiT has no ``pad_tokens_multiple``: the caption reaches the DiT at its exact token count, and
the image tokens' RoPE positions start after it (0.33.0 ``model.py:707``), so padding would move
them. Each exact caption length is its own graph; cond and uncond of different lengths run as two
batch-1 calls (``c_crossattn`` is a ``CONDRegular`` and ``num_tokens`` a ``CONDConstant``: neither
concatenates across lengths).

Read for host syncs and value-dependent branches (ComfyUI 0.33.0, ``comfy/ldm/lumina/model.py``):

- ``model_base.py:1514`` ``torch.sum(attention_mask).item()`` computes ``num_tokens`` in
  ``extra_conds``, once per conditioning, before sampling: not in the forward. ``num_tokens`` is a
  Python int argument, so it is part of the key (it is unused by the forward in 0.33.0 and 0.8.0).
- ``model.py:721`` and ``:813`` set the caption and joint masks to None: a passed
  ``attention_mask`` (only when it holds zeros) is ignored in 0.33.0. In 0.8.0 it reaches the
  context refiner's attention as a tensor; its shape is in the key, its values are read on the
  device. Either way: shape-only.
- ``model.py:826`` ``omni = len(ref_latents) > 0`` and the ``timestep_zero_index`` slices built from
  it (Z-Image Omni only): Python lists of shapes, in the key through ``ref_latents``' shapes.
- ``model.py:844`` the NewBie pooled branch tests ``clip_text_pooled`` for None: an argument
  whose presence and shape are in the key.
- ``model.py:165`` ``comfy_kitchen`` ``rms_rope1`` (the GQA path; Z-Image takes ``rms_rope``):
  dispatch picks a backend from shapes, strides and dtypes, no host read. ``in_training`` is a
  process flag, constant across a sampling run. 0.8.0 calls ``flux.math.apply_rope`` instead.
- ``model.py:638`` ``unpatchify`` loops over the batch size with sizes from shapes.
- ``model.py:864`` ``double_block`` / ``noise_refiner`` patches: any patch makes the call eager
  (``options.py``).

No op syncs with the host, so mode 'full' is safe. ``forward`` runs ``_forward`` through the
DIFFUSION_MODEL ``WrapperExecutor`` in both hosts (0.33.0 ``model.py:817``, 0.8.0 likewise).
"""

import torch

from .base import ModelAdapter, WarmupFacts

ADAPTER = ModelAdapter(
    family="lumina2",
    display_name="Lumina 2",
    config_classes=("Lumina2",),
    max_text_length=1024,
    text_policy="exact length: captions are unpadded and image positions follow them; each caption length is its own graph",
)


def _lumina2_extras(facts, batch, length, generator, guidance):
    """Gemma-2-2B through CLIPTextEncode: no pooled output, an all-ones attention mask (which
    ``model_base.Lumina2.extra_conds`` drops, keeping only ``num_tokens``)."""
    return {"pooled_output": None, "attention_mask": torch.ones(batch, length, dtype=torch.long)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=2304,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=16,
    conditioning_extras=_lumina2_extras,
)
