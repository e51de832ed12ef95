"""LongCat-Image and LongCat-Image-Edit (``supported_models.LongCatImage``: ``comfy.ldm.flux.model.Flux``
with the LongCat config; ``model_base.LongCatImage``), ComfyUI 0.33.0 only (0.8.0 has no such
class: its tests skip there).

FLUX.1's DiT (6B, no pooled vector, no guidance embedding) with a Qwen2.5-VL-7B context whose RoPE
ids count along the text; ``LongCatImage`` is its own config class (adapters match by exact name),
so the FLUX adapter does not serve it. Beyond shapes the key holds the ``rope_options`` shifts that
``_apply_model`` sets from the context length (Python floats, keyed by options.py); nothing is
refused. Text: the tokenizer pads (or truncates) every prompt to 512 tokens with real pad tokens,
so every prompt reaches the DiT as a 512-long context, as stock ComfyUI computes it: one graph
serves every prompt and cond and uncond batch; the encoder's mask is dropped before the DiT. Edit
calls carry ``ref_latents``: shapes in the key, values copied at replay, sizes in the label
(``ref WxH``), as FLUX.1 Kontext. No op syncs with the host, so mode 'full' is safe. Source audit:
tests/comfy/test_longcat_image.py.
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
