"""Z-Image and Z-Image-Turbo (Lumina2 ``NextDiT`` with the Z-Image config).

Text rule: **exact buckets of 32**. The DiT embeds the caption (``cap_embedder``: RMSNorm and
Linear, row by row) and pads it to a multiple of ``pad_tokens_multiple`` (32) with its learned
``cap_pad_token`` itself; from there on nothing in the forward reads the real length. So BCG runs
that embedding and padding eagerly, with the model's own modules, and the rest of the forward is
keyed by the padded length: every caption of 33-64 tokens replays one graph. Padding the caption
*before* the model instead would change the output (its pad rows would pass the embedder); see
``tests/comfy/test_zimage_text_buckets.py`` for the source audit and the proof across lengths.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any

import torch

from .base import ModelAdapter, PaddedText, WarmupFacts

#: The DiT inputs whose bearing on the caption path the rule above was read for (0.8.0 and 0.33.0);
#: a call carrying any other input (a newer host's ``direct_context``, say, which newer
#: ``embed_cap`` joins to the caption before padding) keeps its exact length.
KNOWN_INPUTS = frozenset(
    {"x", "timesteps", "context", "num_tokens", "attention_mask", "ref_latents", "ref_contexts", "siglip_feats",
     "clip_text_pooled", "transformer_options", "control"}
)  # fmt: skip


#: Per DiT, the width and dtype its caption embedding came out with, by the caption's dtype, device
#: and width: later calls are keyed by that shape without running the embedding.
_EMBEDDINGS: "weakref.WeakKeyDictionary[torch.nn.Module, dict]" = weakref.WeakKeyDictionary()


def _given(value: Any) -> bool:
    return value is not None and not (isinstance(value, (list, tuple, dict)) and not value)


class ZImageAdapter(ModelAdapter):
    #: ``NextDiT.pad_tokens_multiple`` of the Z-Image config (the live model's own value decides).
    CAPTION_MULTIPLE = 32

    def text_bucket(self, tokens: int) -> tuple[int, int]:
        top = -(-tokens // self.CAPTION_MULTIPLE) * self.CAPTION_MULTIPLE
        return top - self.CAPTION_MULTIPLE + 1, top

    def padded_text(self, diffusion_model: Any, call: dict[str, Any]) -> PaddedText | None:
        context = call.get("context")
        if not isinstance(context, torch.Tensor) or context.dim() != 3:
            return None
        for name, value in call.items():
            if name not in KNOWN_INPUTS and _given(value):
                return None
        # The reference path (Z-Image Omni) embeds more captions through the same module, and a
        # caption mask (only one holding zeros reaches the DiT) is read by 0.8.0's context refiner.
        if call.get("ref_latents") or call.get("ref_contexts") or call.get("siglip_feats"):
            return None
        if call.get("attention_mask") is not None or call.get("clip_text_pooled") is not None:
            return None
        multiple = getattr(diffusion_model, "pad_tokens_multiple", None)
        embedder = getattr(diffusion_model, "cap_embedder", None)
        pad_token = getattr(diffusion_model, "cap_pad_token", None)
        if not isinstance(multiple, int) or not isinstance(embedder, torch.nn.Module) or pad_token is None:
            return None
        padded = -(-context.shape[1] // multiple) * multiple
        facts = (context.dtype, context.device, context.shape[-1])
        seen = _EMBEDDINGS.get(diffusion_model)
        if seen is None:
            seen = _EMBEDDINGS[diffusion_model] = {}

        def embed() -> dict:
            embedded = embedder(context)
            pad = pad_token.to(device=embedded.device, dtype=embedded.dtype, copy=True).unsqueeze(0)
            embedded = torch.cat((embedded, pad.repeat(embedded.shape[0], padded - embedded.shape[1], 1)), dim=1)
            seen[facts] = (embedded.shape[-1], embedded.dtype)
            return {**call, "context": embedded}

        shape = seen.get(facts)
        if shape is None:
            try:
                keyed, later = embed(), None
            except Exception:  # a caption the model cannot take: the stock forward raises its own error
                return None
        else:  # keyed by the embedding's shape; embedded only for a capture or a replay
            width, dtype = shape
            shaped = torch.empty((context.shape[0], padded, width), dtype=dtype, device=context.device)
            keyed, later = {**call, "context": shaped}, embed
        return PaddedText(
            received=call,
            call=keyed,
            length=context.shape[1],
            lengths=(padded - multiple + 1, padded),
            embedded=lambda: _caption_embedded(diffusion_model),
            unkeyed=("num_tokens",),
            embed=later,
        )


@contextlib.contextmanager
def _caption_embedded(diffusion_model: torch.nn.Module):
    """The DiT's ``cap_embedder`` passes its input through while open: the forward then pads the
    already padded caption by nothing and runs on. Only the run's own thread calls the DiT while
    it is open (``decision``: another thread's call runs eager without a prologue)."""
    modules = diffusion_model._modules
    embedder = modules["cap_embedder"]
    modules["cap_embedder"] = torch.nn.Identity()
    try:
        yield
    finally:
        modules["cap_embedder"] = embedder


ADAPTER = ZImageAdapter(
    family="zimage",
    display_name="Z-Image",
    config_classes=("ZImage",),
    max_text_length=1024,
    text_policy="exact buckets of 32: the model embeds and pads captions itself; BCG runs that eagerly and "
    "every length of a bucket (33-64) replays one graph",
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
