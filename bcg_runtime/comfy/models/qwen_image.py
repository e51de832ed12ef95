"""Qwen-Image, Qwen-Image-2512 and Qwen-Image-Edit (2509, 2511)
(``comfy.ldm.qwen_image.model.QwenImageTransformer2DModel``; ``QwenImage``).

Text: the context arrives at its exact token count with no mask (ComfyUI 0.8.0 drops an all-ones
mask), and text RoPE positions start after the image grid, so padding would add unmasked tokens:
each exact length is its own graph. Cond and uncond of different lengths run as two batch-1 calls,
each replaying its own graph. Qwen-Image-Edit is the same class, called with ``ref_latents``:
each reference's shape, stride and dtype is in the key and its values are copied into the graph's
static inputs at every replay, so a new image of a known size replays and a new size is a new
signature, labelled ``ref WxH[+WxH...]``. The ``ref_latents_method`` string argument is in the key
by value; Edit-2511's default method comes from an empty buffer, part of the address state like
every buffer. Nothing is refused; the reference path reads only shapes and keyed values on the
host. Source audit: tests/comfy/test_reference_latents.py.
"""

from typing import Any

from .base import ModelAdapter, WarmupFacts
from .flux import reference_label


class QwenImageAdapter(ModelAdapter):
    def label(self, call: dict[str, Any]) -> str:
        return super().label(call) + reference_label(call, self.latent_scale)


ADAPTER = QwenImageAdapter(
    family="qwen_image",
    display_name="Qwen-Image",  # Qwen-Image-Edit included: same class
    config_classes=("QwenImage",),
    max_text_length=1024,
    text_policy="exact length: unmasked text attention, each prompt length is its own graph",
    padded_text_rows_exact=False,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=3584,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=16,
)
