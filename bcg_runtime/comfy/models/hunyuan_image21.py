"""HunyuanImage 2.1 (``supported_models.HunyuanImage21``: ``comfy.ldm.hunyuan_video.model.HunyuanVideo``
with a 2-D patch), in ComfyUI 0.8.0 and 0.33.0.

The 17B DiT over 64-channel latents of a 32x VAE with a Qwen2.5-VL-7B context and a byT5 glyph
mapper; the same forward as HunyuanVideo 1.5 (``hunyuan_video15.py``), whose adapter this one
extends (the refiner has its own, ``hunyuan_image21_refiner.py``). Refused: meanflow (distilled,
``time_r_in``) checkpoints unless ``disable_time_r``: the forward finds the next sigma with
``torch.where`` over the sampler's schedule, a host sync a graph would freeze
(:data:`MEANFLOW_REFUSAL`). Nothing is keyed beyond shapes: ``guidance``, a padded batch's mask and
``txt_byt5`` (quoted text, labelled ``byt5:N``) are tensor arguments, their values copied at
replay. Text: the exact token count after the template, no mask; text RoPE ids are zeros, so
padding would add unmasked tokens: each prompt length is its own graph. Every other host branch
reads shapes, dtypes or fixed config, so mode 'full' is safe for every call not refused. Source
audit: tests/comfy/test_hunyuan_image21.py.
"""

from typing import Any

from .base import WarmupFacts
from .hunyuan_video15 import HunyuanVideo15Adapter

MEANFLOW_REFUSAL = (
    "HunyuanImage 2.1 distilled (meanflow, time_r_in) checkpoint: the forward finds the next sigma "
    "with torch.where over the sampler's schedule (a host sync and a branch on its values), which a "
    "graph would freeze; running eager"
)


class HunyuanImage21Adapter(HunyuanVideo15Adapter):
    """HunyuanVideo 1.5's adapter (meanflow found per model, byT5 tokens in the label) with this
    family's refusal text."""

    def refusal(self, call: dict[str, Any]) -> str | None:
        return MEANFLOW_REFUSAL if super().refusal(call) else None


ADAPTER = HunyuanImage21Adapter(
    family="hunyuan_image21",
    display_name="HunyuanImage 2.1",
    config_classes=("HunyuanImage21",),
    max_text_length=1024,
    text_policy="exact length: Qwen2.5-VL context unpadded and unmasked, each prompt length is its own graph",
    latent_scale=32,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=3584,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=64,
)
