"""HunyuanVideo 1.5 (``comfy.ldm.hunyuan_video.model.HunyuanVideo`` with the 1.5 config;
``HunyuanVideo15``), in ComfyUI 0.8.0 and 0.33.0.

The 8.3B DiT with a Qwen2.5-VL-7B context, a byT5 glyph mapper and a SigLIP vision projection;
latents are 5-D ``[B,32,T,H,W]`` at 16x and 4x temporal, and ``x`` always has 65 channels
(``concat_cond`` adds an image latent and a mask, zeros for T2V). Nothing is keyed beyond shapes:
``txt_byt5`` (labelled ``byt5:N``), ``clip_fea`` (``vision:N``), ``ref_latent``, ``guiding_frame_index``
and a padded batch's mask are tensor arguments, presence and shapes in the key, values copied at
replay. Refused: meanflow checkpoints (``time_r_in``, per model) unless ``disable_time_r``: the
forward finds the next sigma with a one-argument ``torch.where`` over the sampler's schedule, a
host sync and a branch a graph would freeze (:data:`MEANFLOW_REFUSAL`). Text: the exact token count
after the template, an all-ones mask dropped; text RoPE ids are zeros, so padding would add
unmasked tokens: each prompt length is its own graph. Every other host branch reads shapes, dtypes
or fixed config, so mode 'full' is safe for every call not refused. Source audit:
tests/comfy/test_hunyuan_video15.py.
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
