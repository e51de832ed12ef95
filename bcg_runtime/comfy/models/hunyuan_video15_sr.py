"""HunyuanVideo 1.5 super-resolution (``supported_models.HunyuanVideo15_SR_Distilled``: the
HunyuanVideo 1.5 model with 98 input channels), in ComfyUI 0.8.0 and 0.33.0.

The HunyuanVideo 1.5 forward, text policy and meanflow rule (``hunyuan_video15.py`` reads the
forward for host syncs); this adapter is HunyuanVideo 1.5's with its own family name (off until its
own GPU test passed). What the class adds (0.33.0 comfy/model_base.py:2692-2721):

- ``concat_cond`` (l.2696-2716): 66 channels of ``x`` beside the 32 of the latent, from the
  ``concat_latent_image`` the SR node builds (the low-resolution video's latent upscaled, its
  slice ``[33:65]`` scaled by 0.75 or mixed with seeded noise by ``noise_augmentation``), zeros
  without one; built before the call (shapes in the key, values copied at replay).
- ``disable_time_r`` False (a ``CONDConstant``, l.2720): a checkpoint with ``time_r_in`` (a
  meanflow distillation) then takes the ``torch.where`` over the sampler's schedule
  (hunyuan_video/model.py:315-321) on every call, which :data:`MEANFLOW_REFUSAL` sends eager (the
  adapter reads ``time_r_in`` from the loaded model). Whether the released SR checkpoints carry
  ``time_r_in`` was not read here (no checkpoint in reach; ComfyUI's explicit False suggests they
  do): if they do, every call of theirs runs eager with that reason, equal to stock ComfyUI.
"""

import dataclasses
from typing import Any

from . import hunyuan_video15

MEANFLOW_REFUSAL = (
    "HunyuanVideo 1.5 SR meanflow (time_r_in) checkpoint: ComfyUI sends disable_time_r=False, so the forward finds "
    "the next sigma with torch.where over the sampler's schedule (a host sync and a branch on its values), which a "
    "graph would freeze; running eager"
)


class HunyuanVideo15SRAdapter(hunyuan_video15.HunyuanVideo15Adapter):
    """HunyuanVideo 1.5's adapter with this class's refusal text."""

    def refusal(self, call: dict[str, Any]) -> str | None:
        return MEANFLOW_REFUSAL if super().refusal(call) else None


ADAPTER = HunyuanVideo15SRAdapter(
    **{
        **{f.name: getattr(hunyuan_video15.ADAPTER, f.name) for f in dataclasses.fields(hunyuan_video15.ADAPTER)},
        "family": "hunyuan_video15_sr",
        "display_name": "HunyuanVideo 1.5 SR",
        "config_classes": ("HunyuanVideo15_SR_Distilled",),
    }
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = hunyuan_video15.FACTS
