"""Lumina-Image 2.0 (``supported_models.Lumina2``: the Lumina2 ``NextDiT`` with dim 2304).

The same ``comfy.ldm.lumina.model.NextDiT`` as Z-Image (``zimage.py``) with the original Lumina 2
config (grouped-query attention, no learned pad tokens, a Gemma-2-2B caption); adapters match the
config class by exact name, so each family keeps its own adapter. Beyond shapes the key holds
``num_tokens``, a Python int argument (unused by the forward); nothing is refused. Text:
Gemma-2-2B does not pad and this NextDiT has no ``pad_tokens_multiple``, so the caption reaches the
DiT at its exact token count and the image tokens' RoPE positions start after it (padding would
move them): each caption length is its own graph, and cond and uncond of different lengths run as
two batch-1 calls. The ``.item()`` that counts ``num_tokens`` runs in ``extra_conds``, once per
conditioning before sampling, not in the forward; a passed ``attention_mask`` is shape-only. No op
syncs with the host, so mode 'full' is safe. Source audit: tests/comfy/test_lumina2.py.
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
