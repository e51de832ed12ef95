"""Kandinsky 5.0 Video (``supported_models.Kandinsky5``) and, through the same adapter class, Image
Lite (``Kandinsky5Image``, ``kandinsky5_image.py``): ``comfy.ldm.kandinsky5.model.Kandinsky5``, in
ComfyUI 0.8.0 and 0.33.0.

Text blocks refine a Qwen2.5-VL-7B context, visual blocks cross-attend to it, the CLIP-L pooled
output (``y``) joins the time embedding; the video DiT sees 33 channels (``concat_cond`` appends a
start latent and a mask), Image Lite the FLUX.1 latent alone. Nothing is keyed beyond the
tensors' shapes. Refused: Image Lite calls with ``time_dim_replace`` (:data:`TIME_DIM_REPLACE_REFUSAL`):
the forward writes the start frames into ``x`` in place, and without concat channels ``x`` can be
the sampler's latent, which ComfyUI reads again, while a replay writes only its own copy (the video
model's ``x`` is a fresh concatenation: exact). Text: the exact token count, an all-ones mask
dropped, text tokens attending unmasked: each prompt length is its own graph. No op syncs with the
host (a full load moves the frequency buffer; lowvram is refused), so mode 'full' is safe. Source
audit: tests/comfy/test_kandinsky5.py.
"""

import dataclasses
from typing import Any

import torch

from .base import ModelAdapter, WarmupFacts

TIME_DIM_REPLACE_REFUSAL = (
    "Kandinsky 5 Image with time_dim_replace: the forward writes the start latent into its input x "
    "in place, and without concat channels that x can be the sampler's latent, which ComfyUI reads "
    "again; a replay writes only its own copy, so such calls run eager"
)


@dataclasses.dataclass(frozen=True)
class Kandinsky5Adapter(ModelAdapter):
    #: True for Image Lite (``Kandinsky5Image``: no concat channels, so ``x`` may alias the sampler's).
    image: bool = False

    def refusal(self, call: dict[str, Any]) -> str | None:
        if self.image and call.get("time_dim_replace") is not None:
            return TIME_DIM_REPLACE_REFUSAL
        return None


ADAPTER = Kandinsky5Adapter(
    family="kandinsky5",
    display_name="Kandinsky 5 Video",
    config_classes=("Kandinsky5",),
    max_text_length=1024,
    text_policy="exact length: Qwen2.5-VL context unpadded and unmasked, each prompt length is its own graph",
    temporal_scale=4,
)


def pooled_clip_l(facts, batch, length, generator, guidance):
    """CLIPTextEncode for Kandinsky 5: the CLIP-L pooled output (``y``); the Qwen encoder drops
    its all-ones mask."""
    return {"pooled_output": torch.randn(batch, facts.pooled_dim, generator=generator)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=3584,
    pooled_dim=768,
    default_cond_length=64,
    latent_channels=16,
    conditioning_extras=pooled_clip_l,
)
