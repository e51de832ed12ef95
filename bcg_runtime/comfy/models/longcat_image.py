"""LongCat-Image and LongCat-Image-Edit (``supported_models.LongCatImage``: ``comfy.ldm.flux.model.Flux``
with the LongCat config; ``model_base.LongCatImage``), ComfyUI 0.33.0 only (0.8.0 has no such
class: its tests skip there).

FLUX.1's DiT at 3072 wide, 24 heads, 10 double and 20 single blocks (6B), no pooled vector, no
guidance embedding, a Qwen2.5-VL-7B context (3584) whose RoPE ids count along the text
(``txt_ids_dims`` [1, 2]). ``LongCatImage`` is its own config class (adapters match by exact
name), so the FLUX adapter does not serve it.

Text: ``LongCatImageBaseTokenizer`` pads (or truncates) every prompt to 512 tokens with real pad
tokens, and ``LongCatImageTEModel`` strips the template around them: every prompt reaches the DiT
as a 512-long context, as stock ComfyUI computes it, so one graph serves every prompt and cond
and uncond batch into one call. The encoder's mask over the padding is dropped by
``model_base.Flux.extra_conds`` (0.33 l.1030-1039: only a mask with ``attention_mask_img_shape``,
a region mask, reaches the DiT). ``model_base.LongCatImage._apply_model`` (l.1065-1074) sets
``rope_options`` shifts from the context length: Python floats that options.py puts in the key.

Read for host syncs and value-dependent branches (0.33.0, ``comfy/ldm/flux/``), beyond what
``flux.py`` lists for the shared forward (reference latents, ``process_img``, bookkeeping):

- model.py:402-404: text position ids are ``linspace`` over the context length (a shape).
- model.py:329-336 ``process_img`` reads ``rope_options`` (the shifts above): in the key.
- ``model_base.LongCatImage.extra_conds`` pops ``guidance``; ``encode_adm`` returns None (no ``y``).
- LongCat-Image-Edit calls carry ``ref_latents`` (the ReferenceLatent node): shapes in the key,
  values copied at replay, each size named in the label (``ref WxH``), as FLUX.1 Kontext.

No op syncs with the host, so mode 'full' is safe. ``Flux.forward`` (model.py:344) runs ``_forward``
through the DIFFUSION_MODEL ``WrapperExecutor``.
"""

from typing import Any

from .base import ModelAdapter, WarmupFacts
from .flux import reference_label

#: Every prompt's context length at the DiT: the tokenizer pads the prompt to 512 tokens.
CONTEXT_LENGTH = 512


class LongCatImageAdapter(ModelAdapter):
    def text_length_seen(self, tokens: int) -> int:
        """512 for every prompt (padded, or truncated to it)."""
        return CONTEXT_LENGTH

    def label(self, call: dict[str, Any]) -> str:
        """The base label plus each reference latent's size (edit calls)."""
        return super().label(call) + reference_label(call, self.latent_scale)


ADAPTER = LongCatImageAdapter(
    family="longcat_image",
    display_name="LongCat-Image",
    config_classes=("LongCatImage",),
    max_text_length=CONTEXT_LENGTH,
    text_policy="one bucket, exact: the tokenizer pads every prompt to 512 tokens, so one graph serves every prompt",
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=3584,
    pooled_dim=None,
    default_cond_length=CONTEXT_LENGTH,
    latent_channels=16,
)
