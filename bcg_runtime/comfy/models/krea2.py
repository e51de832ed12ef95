"""Krea 2 (``supported_models.Krea2``: ``comfy.ldm.krea2.model.SingleStreamDiT``), ComfyUI 0.33.0
only (0.8.0 has no ``comfy.ldm.krea2``: its tests skip there).

The 12.9B single-stream DiT (Krea-2 Raw and Turbo) over the Qwen-Image VAE's 16 channels (5-D
latents ``[B,16,1,H,W]``) with a ``txtfusion`` adapter over a 12-layer Qwen3-VL-4B tap (30720
features). Nothing is keyed beyond the tensors' shapes and nothing is refused. Text: the encoder
returns the exact token count and drops an all-ones mask, the forward reads no mask, and text RoPE
ids are zeros, so padding would add attended tokens: each prompt length is its own graph, cond and
uncond of different lengths two batch-1 calls. Edit calls carry ``ref_latents``: each size is in
the key through their shapes and named in the label (``ref WxH``); ``ref_latents_method`` is a
string argument in the key, and the token counts the forward slices by are Python ints from
shapes. No op syncs with the host, so mode 'full' is safe. Source audit: tests/comfy/test_krea2.py.
"""

from typing import Any

from .base import ModelAdapter, WarmupFacts
from .flux import reference_label


class Krea2Adapter(ModelAdapter):
    def label(self, call: dict[str, Any]) -> str:
        """The base label plus each reference latent's size (edit calls)."""
        return super().label(call) + reference_label(call, self.latent_scale)


ADAPTER = Krea2Adapter(
    family="krea2",
    display_name="Krea 2",
    config_classes=("Krea2",),
    max_text_length=1024,
    text_policy="exact length: Qwen3-VL context unpadded and unmasked, each prompt length is its own graph",
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=12 * 2560,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=16,
)
