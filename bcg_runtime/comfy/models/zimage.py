"""Z-Image and Z-Image-Turbo (Lumina2 ``NextDiT`` with the Z-Image config).

The DiT receives the caption at its exact token count (``num_tokens`` is a constant of the call)
and pads it to a multiple of 32 itself, with a *learned* pad token that every other token attends
to. Padding the caption ourselves would change the output (SGLang measured 21 dB PSNR drift doing
exactly that), so each exact caption length is its own graph; the warm-up takes the workflow's
CONDITIONING to capture the lengths it will really send.
"""

import torch

from .base import ModelAdapter, WarmupFacts

ADAPTER = ModelAdapter(
    family="zimage",
    display_name="Z-Image",
    config_classes=("ZImage",),
    max_text_length=1024,
    text_policy="exact length: the model pads captions with learned tokens itself; each caption length is its own graph",
)


def _zimage_extras(facts, batch, length, generator, guidance):
    """Qwen3-4B through CLIPTextEncode: no pooled output, an all-ones attention mask."""
    return {"pooled_output": None, "attention_mask": torch.ones(batch, length, dtype=torch.long)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=2560,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=16,
    conditioning_extras=_zimage_extras,
)
