"""HunyuanVideo 1.0 (``comfy.ldm.hunyuan_video.model.HunyuanVideo`` with the 1.0 config;
``HunyuanVideo``, ``HunyuanVideoI2V``, ``HunyuanVideoSkyreelsI2V``), in ComfyUI 0.8.0 and 0.33.0.

The 13B DiT: hidden 3072, 24 heads of 128, 20 double- and 40 single-stream blocks, a 1x2x2 patch
over 16-channel latents at 8x spatial and 4x temporal (``EmptyHunyuanLatentVideo``: T =
(frames-1)//4 + 1), 3-D RoPE (``axes_dim`` [16, 56, 56]), a LLaVA-LLaMA-3 context (4096), a
pooled CLIP-L vector (``vector_in``, 768) and a guidance embedding (``guidance_in``: the
guidance-distilled checkpoints, FluxGuidance 6.0 with cfg 1). The same forward as HunyuanVideo 1.5
(``hunyuan_video15.py`` reads it line by line for host syncs; none outside the meanflow path, which
no 1.0 checkpoint has: detection turns ``meanflow`` on only for a ``time_r_in`` key), whose adapter
this one extends. One adapter serves the three classes; each has its module and its recipe (this one, and
``hunyuan_video_i2v`` / ``hunyuan_video_skyreels_i2v``; the recipes in ``bench/recipes/``).

Text: ``HunyuanVideoTokenizer`` crops the LLaMA template and keeps the exact token count
(``min_length=1``); the encoder drops an all-ones mask (0.33.0
``comfy/text_encoders/hunyuan_video.py:144-145``), so each prompt length is its own graph (text
RoPE ids are zeros: padding would add attended tokens). A mask (a padded batch of prompts) is
passed by ``model_base.HunyuanVideo.extra_conds`` (model_base.py:1371): a tensor argument, shape
in the key, values copied at replay. ``pooled_output`` reaches the DiT as ``y``, ``guidance``
(6.0 unless FluxGuidance sets it) as a tensor: their values are copied at replay.

Image-to-video, each an input the key sees (0.33.0 ``comfy_extras/nodes_hunyuan.py:313-359``,
``HunyuanImageToVideo``):

- ``HunyuanVideoI2V`` (in_channels 33): ``concat_keys`` ``("concat_image", "mask_inverted")``
  (model_base.py:1396-1402): the start image's latent (``concat_latent_image``, else the input
  latent) and the inverted mask (``concat_mask``, else the latent's ``noise_mask``) are channels
  of ``x``, built before the call; guidance "v2 (replace)" instead sends ``guiding_frame_index``
  (a tensor: the first frame's modulation, ``model.py:331-341``, whose token split is a Python int
  from shapes) with the image in the latent and a noise mask; "custom" sends ``ref_latent``
  (tokens prepended through ``img_in``, ``model.py:323-329``, ids from shapes; only a model whose
  ``img_in`` takes the 16 latent channels, the T2V layout, runs it: stock ComfyUI fails on the 33-
  channel I2V one). Presence and shapes are in the key, values are copied at replay.
- ``HunyuanVideoSkyreelsI2V`` (in_channels 32): ``concat_keys`` ``("concat_image",)``
  (model_base.py:1404-1410): the image latent alone as channels of ``x``.

The forward goes through the DIFFUSION_MODEL wrapper (``HunyuanVideo.forward`` ->
``WrapperExecutor`` around ``_forward``, 0.33.0 model.py:481, 0.8.0 model.py:480).
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
