"""Kandinsky 5.0 Video (``supported_models.Kandinsky5``) and, through the same adapter class,
Kandinsky 5.0 Image Lite (``Kandinsky5Image``, ``kandinsky5_image.py``): one DiT,
``comfy.ldm.kandinsky5.model.Kandinsky5``, in ComfyUI 0.8.0 and 0.33.0 (the model file is the same
in both).

Text blocks refine the Qwen2.5-VL-7B context (3584) alone (1-D RoPE over its tokens), then visual
blocks run self-attention over the video tokens and cross-attention to the text; the CLIP-L pooled
output (768, ``y``) joins the time embedding. Video latents are the HunyuanVideo latent
``[B,16,T,H,W]`` (8x, 4x temporal); ``model_base.Kandinsky5.concat_cond`` always appends a start
image latent and a mask (zeros for T2V), so the video DiT sees 33 channels. Image Lite takes the
FLUX.1 latent ``[B,16,H,W]`` (``_forward`` unsqueezes a frame) and no concat.

Text: the Qwen2.5-VL encoder returns the exact token count after its template and drops an
all-ones mask, and the text tokens attend to each other unmasked: each prompt length is its own
graph (padding would change the text). Cond and uncond of different lengths run as two batch-1
calls (``c_crossattn`` and ``y`` are ``CONDRegular``). A mask that reaches the DiT
(``attention_mask``, a batch of prompts) is ignored by ``_forward`` (``**kwargs``); its shape is in
the key anyway.

Read for host syncs and value-dependent branches (ComfyUI 0.33.0, comfy/ldm/kandinsky5/model.py):

- l.47 ``self.freqs.to(device=timestep.device)``: a buffer made on the CPU at construction; a full
  load moves it with the module (``model.to``), so on the device the ``.to`` is a no-op. Lowvram
  loads, where it could stay behind, are refused by BCG's guards.
- l.142 / l.181 chunked attention and feed-forward above 8192 tokens: ``x.shape[1]``, a shape.
- l.345-347 Video Pro (``model_dim`` 4096) switches its RoPE scale at ``h * w >= 14080``: shapes.
  l.334 ``rope_options`` (in the key). l.313 / l.354 position ids from ``torch.linspace`` over
  Python numbers.
- l.398 ``time_dim_replace`` (``Kandinsky5ImageToVideo``'s start frames) is written into ``x`` in
  place. The video model's ``x`` is a fresh ``torch.cat`` (concat channels), read by nobody after
  the call, so a replay writing only its own copy is exact. Image Lite has no concat: ``x`` can be
  the sampler's own latent (``_apply_model``'s ``xc`` when no cast is needed), which ComfyUI reads
  again in ``calculate_denoised``; such calls are refused (:meth:`Kandinsky5Adapter.refusal`).
- l.117 ``apply_rope1`` via ``comfy_kitchen``: backend from shapes and dtypes; ``in_training`` a
  process flag. Flux's ``rope`` (``flux/math.py:19``) computes on the CPU only where the device has
  no float64 (not CUDA).
- l.375-384 ``total_blocks``, ``block_type``, ``block_index`` (bookkeeping in options.py);
  ``patches_replace`` makes the call eager.

No op syncs with the host, so mode 'full' is safe. ``forward`` runs ``_forward`` through the
DIFFUSION_MODEL ``WrapperExecutor`` in both hosts (0.33.0 l.408).
"""

import dataclasses
from typing import Any

import torch

from .base import ModelAdapter, WarmupFacts

TIME_DIM_REPLACE_REFUSAL = (
    "Kandinsky 5 Image with time_dim_replace: the forward writes the start latent into its input x "
    "in place, and without concat channels that x can be the sampler's latent, which ComfyUI reads "
    "again; a replay writes only its own copy, so such calls run eager"
)


@dataclasses.dataclass(frozen=True)
class Kandinsky5Adapter(ModelAdapter):
    #: True for Image Lite (``Kandinsky5Image``: no concat channels, so ``x`` may alias the sampler's).
    image: bool = False

    def refusal(self, call: dict[str, Any]) -> str | None:
        if self.image and call.get("time_dim_replace") is not None:
            return TIME_DIM_REPLACE_REFUSAL
        return None


ADAPTER = Kandinsky5Adapter(
    family="kandinsky5",
    display_name="Kandinsky 5 Video",
    config_classes=("Kandinsky5",),
    max_text_length=1024,
    text_policy="exact length: Qwen2.5-VL context unpadded and unmasked, each prompt length is its own graph",
    temporal_scale=4,
)


def pooled_clip_l(facts, batch, length, generator, guidance):
    """CLIPTextEncode for Kandinsky 5: the CLIP-L pooled output (``y``); the Qwen encoder drops
    its all-ones mask."""
    return {"pooled_output": torch.randn(batch, facts.pooled_dim, generator=generator)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=3584,
    pooled_dim=768,
    default_cond_length=64,
    latent_channels=16,
    conditioning_extras=pooled_clip_l,
)
