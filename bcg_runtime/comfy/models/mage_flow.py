"""Mage-Flow (``MageFlow``; ``comfy.ldm.mage_flow.model.MageFlowTransformer2DModel``,
``model_base.MageFlow``, a ``QwenImage`` model base), ComfyUI 0.33.0 only (0.8.0 has no such class:
its tests skip there).

A 12-block Qwen-Image double-stream DiT with patch size 1 over the FLUX.2 latent (128 channels at
16x) and a Qwen3-VL-4B context. Nothing is keyed beyond the tensors' shapes and nothing is refused.
Edit calls carry ``ref_latents``: each reference's shape is in the key, its values are copied into
the graph's inputs at every replay, and the label names its size (``ref WxH``). Text: the Qwen3-VL
tokenizer does not pad and the encoder drops its mask when nothing is masked, so every prompt
length is its own graph. Positions, the timestep table and the attention mask are made on the
device from shapes; ControlNet outputs are tensor arguments. No op syncs with the host, so mode
'full' is safe. Source audit: tests/comfy/test_mage_flow.py.
"""

from typing import Any

from .base import ModelAdapter, WarmupFacts
from .flux import reference_label


class MageFlowAdapter(ModelAdapter):
    def label(self, call: dict[str, Any]) -> str:
        """The base label plus each reference latent's size (edit calls)."""
        return super().label(call) + reference_label(call, self.latent_scale)


ADAPTER = MageFlowAdapter(
    family="mage_flow",
    display_name="Mage-Flow",
    config_classes=("MageFlow",),
    max_text_length=1024,
    text_policy="exact length: the Qwen3-VL encoder does not pad, each prompt length is its own graph",
    latent_scale=16,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=2560,
    pooled_dim=None,
    default_cond_length=40,
    latent_channels=128,
)
