"""JoyImage (``JoyImage``; ``comfy.ldm.joyimage.model.JoyImageTransformer3DModel``,
``model_base.JoyImage``), ComfyUI 0.33.0 only (0.8.0 has no such class: its tests skip there).

A double-stream DiT over the Wan 2.1 latent (5-D ``[B,16,1,H,W]`` for an image) with a
Qwen3-VL-8B context. Nothing is keyed beyond the tensors' shapes and nothing is refused. Edit
calls carry ``ref_latents``: each reference's shape is in the key, its values are copied into the
graph's inputs at every replay, and the label names its size (``ref WxH``); the DiT's latent
argument is ``hidden_states`` (not ``x``), which the label reads. Text: the Qwen3-VL tokenizer does
not pad and no mask reaches the DiT, so every prompt length is its own graph. No op syncs with the
host (positions are ``arange`` on the device from shapes; q/k RMSNorm and RoPE are one
``comfy_kitchen`` kernel on the current stream), so mode 'full' is safe. Source audit:
tests/comfy/test_joyimage.py.
"""

from typing import Any

from .base import ModelAdapter, WarmupFacts
from .flux import reference_label


class JoyImageAdapter(ModelAdapter):
    def label(self, call: dict[str, Any]) -> str:
        """The base label of ``hidden_states`` (the DiT's latent argument) plus each reference
        latent's size (edit calls)."""
        return super().label({**call, "x": call.get("hidden_states")}) + reference_label(call, self.latent_scale)


ADAPTER = JoyImageAdapter(
    family="joyimage",
    display_name="JoyImage",
    config_classes=("JoyImage",),
    max_text_length=1024,
    text_policy="exact length: the Qwen3-VL encoder does not pad, each prompt length is its own graph",
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=4096,
    pooled_dim=None,
    default_cond_length=40,
    latent_channels=16,
)
