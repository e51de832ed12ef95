"""FLUX.1 dev / schnell and FLUX.1 Kontext (``comfy.ldm.flux.model.Flux``).

ComfyUI's T5 tokenizer pads every prompt to at least 256 tokens (``min_length=256``) with real,
unmasked pad tokens, so every prompt of up to 256 tokens reaches the DiT as a 256-long context:
one graph serves them all, exactly as stock ComfyUI computes them. Longer prompts arrive at their
exact length. No op in the forward syncs with the host.

FLUX.1 Kontext is the same class and the same checkpoint layout (detection cannot tell it from
dev; ``default_ref_method`` stays "offset"), called with ``ref_latents``: the list that
``model_base.Flux.extra_conds`` builds from the conditioning's ``reference_latents``
(ReferenceLatent node, one entry per chained image), moved to the device by ``_apply_model``.
The list is an ordinary argument of the call: each reference's shape, stride and dtype is in the
key and its values are copied into the graph's static inputs at every replay, so a new image of
a known size replays and a new size is a new signature, labelled ``ref WxH[+WxH...]``.
The reference path, read for host syncs in 0.33.0 (``comfy/ldm/flux/model.py``), has none:

- model.py:360-392: a Python loop over the list (its length is in the key) whose RoPE offsets
  (``index``, ``h_offset``, ``w_offset``) come from ``ref.shape`` and ``ref_index_scale`` only;
  the branch is chosen by ``ref_latents_method``, a string argument (the FluxKontextMultiReferenceLatentMethod
  node's ``reference_latents_method``; its value is in the key) or else ``params.default_ref_method``,
  which only an object patch changes (FluxKVCache: object patches are in the address state, and
  that node's attention patches make its calls eager anyway).
- model.py:393-396 ("index_timestep_zero"): ``timestep`` concatenated with ``timestep * 0`` on the
  device and ``timestep_zero_index`` built from token counts; layers.py:139 ``apply_mod`` then
  slices by those Python ints: shape-derived. (Stock 0.33 raises there for FLUX.1's per-block
  modulation, eager or not; the path serves FLUX.2's global modulation.)
- ``process_img`` (model.py:314-342) builds position ids with ``torch.linspace`` over Python
  numbers from shapes and ``rope_options`` (in the key).
- model.py:398: ``transformer_options["reference_image_num_tokens"]`` is written for patches
  (bookkeeping in options.py).
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
