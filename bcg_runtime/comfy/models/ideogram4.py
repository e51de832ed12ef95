"""Ideogram 4 (``comfy.ldm.ideogram4.model.Ideogram4Transformer2DModel``; ComfyUI 0.33.0 on).

A NextDiT-like single-stream DiT (text then image tokens) over FLUX.2's latent (128 channels at
16x) with Qwen3-VL-8B features from 13 layers (53248 wide); detection supplies the real widths for
every checkpoint it accepts. Nothing is keyed beyond the tensors' shapes. Text: the tokenizer does
not pad and the DiT has no pad tokens, so each prompt length is its own graph. ``extra_conds``
passes ``attention_mask`` only when it holds zeros (labelled ``masked``); the forward writes it into
its segment ids by boolean-mask assignment of a scalar, which ATen dispatches to ``masked_fill_`` on
the target's device: shape-only, and the mask's values are read at replay. That dispatch needs the
mask on the target's device (ComfyUI's conditioning always puts it there); a mask elsewhere would
take the ``nonzero`` path, so :meth:`Ideogram4Adapter.refusal` sends such a call eager. No op syncs
with the host, so mode 'full' is safe. Source audit: tests/comfy/test_ideogram4.py.
"""

from typing import Any

import torch

from .base import ModelAdapter, WarmupFacts


class Ideogram4Adapter(ModelAdapter):
    def refusal(self, call: dict[str, Any]) -> str | None:
        x, mask = call.get("x"), call.get("attention_mask")
        if mask is not None and hasattr(mask, "device") and hasattr(x, "device") and mask.device != x.device:
            return (
                f"text attention mask on {mask.device}, latent on {x.device}: the model's boolean-mask "
                "assignment would read the mask on the host (nonzero), which a graph cannot do"
            )
        return None

    def label(self, call: dict[str, Any]) -> str:
        """``WIDTHxHEIGHT txtN [masked] bB``: calls with a text mask key apart from those without."""
        text = super().label(call)
        if call.get("attention_mask") is not None and " b" in text:
            head, _, batch = text.rpartition(" b")
            return f"{head} masked b{batch}"
        return text


ADAPTER = Ideogram4Adapter(
    family="ideogram4",
    display_name="Ideogram 4",
    config_classes=("Ideogram4",),
    max_text_length=2048,
    text_policy="exact length: unpadded Qwen3-VL context, each prompt length is its own graph (a text mask, when sent, is read on the device)",
    latent_scale=16,
)


def _ideogram4_extras(facts, batch, length, generator, guidance):
    """Qwen3-VL-8B through CLIPTextEncode: no pooled output, an all-ones attention mask (which
    ``model_base.Ideogram4.extra_conds`` drops)."""
    return {"pooled_output": None, "attention_mask": torch.ones(batch, length, dtype=torch.long)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=53248,
    pooled_dim=None,
    default_cond_length=128,
    latent_channels=128,
    conditioning_extras=_ideogram4_extras,
)
