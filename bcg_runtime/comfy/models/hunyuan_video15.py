"""HunyuanVideo 1.5 (``comfy.ldm.hunyuan_video.model.HunyuanVideo`` with the 1.5 config;
``HunyuanVideo15``), in ComfyUI 0.8.0 and 0.33.0.

The 8.3B DiT: hidden 2048, 16 heads of 128, 54 double-stream blocks and no single-stream block,
Qwen2.5-VL-7B context (3584), a byT5 glyph mapper (``byt5_in``), a SigLIP vision projection
(``vision_in``, 1152) and a ``cond_type_embedding``. Latents are 5-D ``[B,32,T,H,W]`` at 16x
spatial and 4x temporal (``EmptyHunyuanVideo15Latent``: T = (frames-1)//4 + 1, patch 1x1x1). The
checkpoint's ``img_in`` takes 65 channels, so ``model_base.HunyuanVideo15.concat_cond`` always
concatenates an image latent and a mask (zeros for T2V, the start image for
``HunyuanVideo15ImageToVideo``): ``x`` reaches the DiT with 65 channels either way.

Text: the Qwen2.5-VL encoder returns the exact token count after its template (no padding) and
drops an all-ones mask (``qwen_image.py`` l.82), so each prompt length is its own graph, as for
Qwen-Image; text RoPE ids are zeros, so padding would add unmasked tokens. Cond and uncond of
different lengths run apart (ComfyUI batches them only when it may repeat the shorter one).
A mask reaches the DiT only when the encoder saw padding (a batch of prompts): the encoder drops
an all-ones one, and although ``model_base.HunyuanVideo15.extra_conds`` (0.33 l.2672) also passes
only a mask with a zero, its ``super()`` (``HunyuanVideo.extra_conds``, l.1371) passes any mask it
gets. It is then a tensor argument like any other (shape in the key, values copied at replay).
(Stock l.388 writes the ``[B, L]`` mask into a ``[1, T]`` slice, T counting glyph and vision
tokens too, so stock ComfyUI runs masked text only at batch 1 with text tokens alone.)

Read for host syncs and value-dependent branches (0.33.0, comfy/ldm/hunyuan_video/model.py; 0.8.0
has the same forward with the image tokens first, ``flipped_img_txt``, and no ``img_slice``):

- l.315-321, meanflow checkpoints (``time_r_in``, the step-distilled variants) unless
  ``disable_time_r``: ``torch.where(sigmas[0] == sample_sigmas)`` (a one-argument ``where``: a host
  sync), ``len(w) > 0`` (a Python branch on its values) and ``sample_sigmas[w[0] + 1]`` read the
  sampler's schedule from ``transformer_options``, which options.py treats as bookkeeping. A graph
  would freeze the branch and the r-timestep of its capture: :meth:`refusal` sends such calls
  eager with the reason. The base checkpoints have no ``time_r_in``.
- l.351: ``torch.is_floating_point(txt_mask)``: the mask's dtype, in the key. l.352 turns an
  integer mask into an additive one on the device; the token refiner (l.124-126) and l.385-388
  build the attention masks from shapes and device copies: no sync.
- l.162: ``x.dtype`` branch in ``TokenRefiner``: in the key. l.357: ``cond_type_embedding.to``
  is a no-op once the weights are on the device (a plain ``nn.Embedding``: ComfyUI loads it whole,
  in float32, and l.359 casts its rows).
- l.361 ``txt_byt5`` (``conditioning_byt5small``: quoted text in the prompt), l.372 ``clip_fea``
  (``clip_vision_output.last_hidden_state``, I2V), l.323 ``ref_latent``, l.331
  ``guiding_frame_index``: presence of arguments, in the key; their token counts are shapes.
- l.347: ``guidance_embed`` is a fixed config (False for the 1.5 checkpoints: the ``guidance``
  6.0 that ``model_base.HunyuanVideo.extra_conds`` always sends is then unused).
- l.393-420: ``total_blocks``, ``block_type``, ``block_index``, ``img_slice`` written for patches
  (bookkeeping in options.py); ``patches_replace`` makes the call eager. l.409 ``control``
  (ControlNet) is an argument; l.447-456 reshape by shapes. img_ids: ``torch.linspace`` over
  Python numbers from shapes.
- Outside the DiT: ``model_base.HunyuanVideo15.extra_conds`` (``numel != sum`` of the mask) runs
  once per conditioning, before sampling.

So mode 'full' is safe for every call not refused. The forward goes through the DIFFUSION_MODEL
wrapper (``HunyuanVideo.forward`` -> ``WrapperExecutor`` around ``_forward``, l.481) in both hosts.
"""

import dataclasses
from typing import Any

from .base import ModelAdapter, WarmupFacts

MEANFLOW_REFUSAL = (
    "HunyuanVideo 1.5 meanflow (time_r_in) checkpoint: the forward finds the next sigma with "
    "torch.where over the sampler's schedule (a host sync and a branch on its values), which a graph "
    "would freeze; running eager"
)


@dataclasses.dataclass(frozen=True)
class HunyuanVideo15Adapter(ModelAdapter):
    #: True for a checkpoint with ``time_r_in`` (set per model by :meth:`for_model`).
    meanflow: bool = False

    def for_model(self, model_patcher):
        """Meanflow is a fact of the checkpoint (``time_r_in``, fixed at load)."""
        dm = getattr(getattr(model_patcher, "model", None), "diffusion_model", None)
        meanflow = getattr(dm, "time_r_in", None) is not None
        return self if meanflow == self.meanflow else dataclasses.replace(self, meanflow=meanflow)

    def refusal(self, call: dict[str, Any]) -> str | None:
        if self.meanflow and not call.get("disable_time_r", False):
            return MEANFLOW_REFUSAL
        return None

    def label(self, call: dict[str, Any]) -> str:
        """The base label plus the extra text tokens: ``byt5:N`` (glyph text), ``vision:N`` (I2V)."""
        extra = ""
        for name, tag in (("txt_byt5", "byt5"), ("clip_fea", "vision")):
            value = call.get(name)
            if value is not None and hasattr(value, "shape") and value.dim() >= 2:
                extra += f" {tag}:{value.shape[1]}"
        return super().label(call) + extra


ADAPTER = HunyuanVideo15Adapter(
    family="hunyuan_video15",
    display_name="HunyuanVideo 1.5",
    config_classes=("HunyuanVideo15",),
    max_text_length=1024,
    text_policy="exact length: Qwen2.5-VL context unpadded and unmasked, each prompt length is its own graph",
    latent_scale=16,
    temporal_scale=4,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=3584,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=32,
)
