"""FLUX.1 dev / schnell and FLUX.1 Kontext (``comfy.ldm.flux.model.Flux``; ``Flux``, ``FluxSchnell``).

Text: ComfyUI's T5 tokenizer pads every prompt to at least 256 tokens (``min_length=256``) with
real, unmasked pad tokens, so every prompt of up to 256 tokens reaches the DiT as a 256-long
context: one graph serves them all, exactly as stock ComfyUI computes them. Longer prompts arrive
at their exact length. FLUX.1 Kontext is the same class (detection cannot tell it from dev),
called with ``ref_latents``, the list ``model_base.Flux.extra_conds`` builds from the
conditioning's ``reference_latents``: each reference's shape, stride and dtype is in the key and
its values are copied into the graph's static inputs at every replay, so a new image of a known
size replays and a new size is a new signature, labelled ``ref WxH[+WxH...]``. The
``ref_latents_method`` string argument is in the key by value. Nothing is refused: no op in the
forward, the reference path included, syncs with the host, so mode 'full' is safe. Source audit:
tests/comfy/test_reference_latents.py.
"""

from typing import Any

import torch

from .base import ModelAdapter, WarmupFacts


def reference_label(call: dict[str, Any], scale: int) -> str:
    """`` ref WxH[+WxH...]`` for a call's ``ref_latents`` (pixels at ``scale`` per latent cell),
    with `` (method)`` when the call names a ``ref_latents_method``; "" without references.

    Edit models (FLUX.1 Kontext, Qwen-Image-Edit) take the list as a forward argument; each size is
    part of the signature, so the label names them for warm-up reports and eager reasons."""
    refs = call.get("ref_latents")
    if not isinstance(refs, (list, tuple)) or not refs:
        return ""
    sizes = "+".join(f"{r.shape[-1] * scale}x{r.shape[-2] * scale}" if hasattr(r, "shape") else "?" for r in refs)
    method = call.get("ref_latents_method")
    return f" ref {sizes}" + (f" ({method})" if isinstance(method, str) else "")


class FluxAdapter(ModelAdapter):
    T5_MIN_LENGTH = 256

    def text_length_seen(self, tokens: int) -> int:
        return max(self.T5_MIN_LENGTH, tokens)

    def label(self, call: dict[str, Any]) -> str:
        return super().label(call) + reference_label(call, self.latent_scale)


ADAPTER = FluxAdapter(
    family="flux",
    display_name="FLUX.1",  # Kontext [dev] included: same class, same layout
    config_classes=("Flux", "FluxSchnell"),
    max_text_length=512,
    text_policy="natural buckets, exact: T5 pads every prompt to 256 tokens (longer prompts keep their length)",
)


def _flux_extras(facts, batch, length, generator, guidance):
    """CLIPTextEncode (T5-XXL + CLIP-L) with FluxGuidance: a pooled CLIP-L output and the guidance."""
    pooled = torch.randn(batch, facts.pooled_dim, generator=generator, dtype=torch.float32)
    return {"pooled_output": pooled, "guidance": float(facts.default_guidance if guidance is None else guidance)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=4096,
    pooled_dim=768,
    default_cond_length=256,  # the T5 tokenizer pads to min_length=256
    latent_channels=16,
    default_guidance=3.5,
    conditioning_extras=_flux_extras,
)
