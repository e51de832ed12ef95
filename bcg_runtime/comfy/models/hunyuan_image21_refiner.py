"""HunyuanImage 2.1 refiner (``supported_models.HunyuanImage21Refiner``:
``comfy.ldm.hunyuan_video.model.HunyuanVideo`` with a 3-D patch), in ComfyUI 0.8.0 and 0.33.0.

The refiner DiT: hidden 3328, 26 heads of 128, 20 double- and 40 single-stream blocks, a 1x1x1
patch, 3-D RoPE (``axes_dim`` [16, 56, 56]), Qwen2.5-VL-7B context (3584), a guidance embedding
and ``time_r_in`` (meanflow), no pooled vector (0.33.0 comfy/supported_models.py:2071-2085). The
forward is HunyuanVideo 1.5's (``hunyuan_video15.py`` reads it for host syncs), whose adapter
HunyuanImage 2.1's extends; this one is HunyuanImage 2.1's with the refiner's VAE scale and its
own family name (off until its own GPU test passed).

What the class adds (comfy/model_base.py:2604-2630):

- ``disable_time_r`` is always True (a ``CONDConstant``, l.2629): the meanflow branch with its
  ``torch.where`` over the schedule (hunyuan_video/model.py:315-321) never runs, so the refiner is
  served although it carries ``time_r_in`` (a call without the flag would run eager, as for the
  distilled base checkpoint).
- ``concat_cond`` (l.2605-2626): the image to refine (``HunyuanRefinerLatent``'s
  ``concat_latent_image``, 32 channels of the refiner VAE at 16x, packed two frames per 64
  channels by ``latent_formats.HunyuanImage21Refiner.process_in``) scaled by 0.75 or mixed with
  seeded noise (``noise_augmentation``), zeros without one: 64 channels of ``x`` beside the 64 of
  the latent, built before the call (shapes in the key, values copied at replay).

Latents are 5-D ``[B, 64, 1, H/16, W/16]`` (an image is one latent frame), labelled without frames.
Text as HunyuanImage 2.1's: exact length, each prompt length its own graph.
"""

import dataclasses

from . import hunyuan_image21

ADAPTER = dataclasses.replace(
    hunyuan_image21.ADAPTER,
    family="hunyuan_image21_refiner",
    display_name="HunyuanImage 2.1 Refiner",
    config_classes=("HunyuanImage21Refiner",),
    latent_scale=16,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = hunyuan_image21.FACTS
