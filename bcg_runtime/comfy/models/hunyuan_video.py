"""HunyuanVideo 1.0 (``comfy.ldm.hunyuan_video.model.HunyuanVideo`` with the 1.0 config;
``HunyuanVideo``, ``HunyuanVideoI2V``, ``HunyuanVideoSkyreelsI2V``), in ComfyUI 0.8.0 and 0.33.0.

The 13B DiT with a LLaVA-LLaMA-3 context, a pooled CLIP-L vector (``y``) and a guidance
embedding; the same forward as HunyuanVideo 1.5 (``hunyuan_video15.py``), whose adapter this one
extends: no host sync outside the meanflow path, refused with :data:`MEANFLOW_REFUSAL` (no 1.0
checkpoint has ``time_r_in``). One adapter serves the three classes, each with its own module and
recipe. Nothing is keyed beyond shapes: ``y``, ``guidance``, a padded batch's mask and the
image-to-video inputs (the start image and inverted mask as channels of ``x``, "v2 (replace)"'s
``guiding_frame_index``, "custom"'s ``ref_latent``) are tensor arguments, presence and shapes in
the key, values copied at replay; labels add `` guided`` and `` ref:Nf``. Text:
``HunyuanVideoTokenizer`` keeps the exact token count and the encoder drops an all-ones mask; text
RoPE ids are zeros, so padding would add attended tokens: each prompt length is its own graph.
Mode 'full' is safe for every call not refused. Source audit: tests/comfy/test_hunyuan_variants.py.
"""

from typing import Any

from .base import WarmupFacts
from .hunyuan_video15 import HunyuanVideo15Adapter

MEANFLOW_REFUSAL = (
    "HunyuanVideo meanflow (time_r_in) checkpoint: the forward finds the next sigma with torch.where "
    "over the sampler's schedule (a host sync and a branch on its values), which a graph would freeze; running eager"
)


class HunyuanVideoAdapter(HunyuanVideo15Adapter):
    """HunyuanVideo 1.5's adapter (meanflow found per model) with this family's refusal text and
    labels that name the image-to-video inputs outside ``x``."""

    def refusal(self, call: dict[str, Any]) -> str | None:
        return MEANFLOW_REFUSAL if super().refusal(call) else None

    def label(self, call: dict[str, Any]) -> str:
        """The base label plus `` guided`` (``guiding_frame_index``) and `` ref:Nf``
        (``ref_latent``, N latent frames) where the call has them."""
        extra = " guided" if call.get("guiding_frame_index") is not None else ""
        ref = call.get("ref_latent")
        if ref is not None and hasattr(ref, "shape") and ref.dim() == 5:
            extra += f" ref:{ref.shape[2]}f"
        return super().label(call) + extra


ADAPTER = HunyuanVideoAdapter(
    family="hunyuan_video",
    display_name="HunyuanVideo",
    config_classes=("HunyuanVideo", "HunyuanVideoI2V", "HunyuanVideoSkyreelsI2V"),
    max_text_length=1024,
    text_policy="exact length: LLaVA-LLaMA-3 context unpadded and unmasked, each prompt length is its own graph",
    latent_scale=8,
    temporal_scale=4,
)


def hunyuan_video_extras(facts, batch, length, generator, guidance):
    """The HunyuanVideo text encoder node (LLaVA-LLaMA-3 + CLIP-L) with FluxGuidance: a pooled
    CLIP-L output (``y``) and the distilled guidance."""
    import torch

    pooled = torch.randn(batch, facts.pooled_dim, generator=generator, dtype=torch.float32)
    return {"pooled_output": pooled, "guidance": float(facts.default_guidance if guidance is None else guidance)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=4096,
    pooled_dim=768,
    default_cond_length=64,
    latent_channels=16,
    default_guidance=6.0,
    conditioning_extras=hunyuan_video_extras,
)
