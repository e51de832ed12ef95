"""HunyuanImage 2.1 refiner (``supported_models.HunyuanImage21Refiner``:
``comfy.ldm.hunyuan_video.model.HunyuanVideo`` with a 3-D patch), in ComfyUI 0.8.0 and 0.33.0.

HunyuanImage 2.1's adapter (the HunyuanVideo 1.5 forward, ``hunyuan_video15.py``) with the
refiner's VAE scale (16x) and its own family name (off until its own GPU test passed). ComfyUI
always sends ``disable_time_r=True`` for this class, so the meanflow ``torch.where`` never runs and
the refiner is served although it carries ``time_r_in`` (a call without the flag would run eager
with HunyuanImage 2.1's meanflow refusal, as for the distilled base checkpoint). The image to
refine (``concat_cond``: 64 channels of ``x`` beside the latent's 64) is built before the call:
shapes in the key, values copied at replay. Latents are 5-D ``[B, 64, 1, H/16, W/16]``, labelled
without frames. Text as HunyuanImage 2.1's: exact length, each prompt length its own graph.
Source audit: tests/comfy/test_hunyuan_variants.py.
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
