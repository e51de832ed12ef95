"""Ideogram 4 (``comfy.ldm.ideogram4.model.Ideogram4Transformer2DModel``; ComfyUI 0.33.0 on).

A NextDiT-like single-stream DiT: ``[text tokens, image tokens]`` in one sequence, 34 blocks of
4608 (18 heads of 256), Qwen3-VL-8B features from 13 layers concatenated (53248 wide), FLUX.2's
latent (128 channels at 1/16 of the image, one token per latent cell). The widths are not read
from the checkpoint: ``model_detection`` finds only ``in_channels`` and ``num_layers`` and
``supported_models.Ideogram4.unet_extra_config`` supplies the rest, so every checkpoint this
detection accepts has the real widths.

Text: Qwen3-VL's tokenizer does not pad (``pad_to_max_length=False``) and the DiT has no pad
tokens, so the context arrives at its exact token count: each length is its own graph. (Text RoPE
positions are 0..L-1 and image positions start at 65536, so padding would not move the image; but
padded rows would be attended unless masked, and a mask changes the attention kernel: stock
ComfyUI sends neither.) ``model_base.Ideogram4.extra_conds`` passes
``attention_mask`` only when it holds zeros; such calls are labelled ``masked``.

Read for host syncs and data-dependent shapes (ComfyUI 0.33.0, ``comfy/ldm/ideogram4/model.py``):

- ``:285-287`` the text mask: ``pad = (attention_mask == 0)`` then ``segment_ids[:, :L][pad] = -1``
  and ``indicator[:, :L][pad] = 0``. Boolean-mask *assignment* of a Python scalar never takes
  ``nonzero``: Python's ``__setitem__`` wraps the scalar in a CPU tensor when the target is on
  CUDA, and ``index_put_`` then dispatches a single boolean index on the target's device with a
  one-element CPU value to ``masked_fill_`` (``canDispatchToMaskedFill`` in ATen): an in-place
  elementwise kernel that reads the mask on the device, with the output shape fixed by the
  target. Shape-only, graph-safe, and the mask's *values* are read at replay (the test changes
  them under one graph). The dispatch needs the mask on the target's device, which ComfyUI's
  conditioning always puts there; a mask elsewhere would take the ``nonzero`` path, so
  :meth:`Ideogram4Adapter.refusal` sends such a call eager.
- ``:212`` ``attn_mask.dtype == torch.bool`` and ``:196`` ``llm_features is not None``, ``:321``
  ``context is None`` (the image-only path): dtype and presence of arguments, both in the key.
- ``:64`` ``in_training``: a process flag, constant across a run. ``:70`` ``comfy_kitchen``
  ``rms_rope_split_half``: backend chosen from shapes, strides and dtypes, no host read.
- ``:206`` ``precompute_freqs_cis`` (``text_encoders/llama.py``) with interleaved MRoPE: Python
  loops over constant sections, positions from ``arange`` of shapes.
- The masked attention (``optimized_attention_masked`` with an additive float mask): SDPA reads
  the mask on the device; no host read.

No op syncs with the host, so mode 'full' is safe. ``forward`` runs ``_forward`` through the
DIFFUSION_MODEL ``WrapperExecutor`` (``:309``). ComfyUI 0.8.0 has no Ideogram 4.
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
