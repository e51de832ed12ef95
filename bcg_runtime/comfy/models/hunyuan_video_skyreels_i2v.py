"""SkyReels V1 image-to-video on HunyuanVideo 1.0 (``HunyuanVideoSkyreelsI2V``): the
``hunyuan_video`` adapter (same class, same forward) with a recipe of its layout: ``img_in`` over
32 channels (latent 16 and the start image's latent 16, no mask; 0.33.0
comfy/supported_models.py:1048-1056, ``concat_keys`` ``("concat_image",)`` at
comfy/model_base.py:1404-1410)."""

import dataclasses

from . import hunyuan_video
from .recipe import frozen_config

ADAPTER = hunyuan_video.ADAPTER

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = hunyuan_video.FACTS

#: SkyReels-V1-Hunyuan-I2V (13B): the T2V shape with 32 input channels.
RECIPE = dataclasses.replace(
    hunyuan_video.RECIPE,
    facts=FACTS,
    name="hunyuan_video_skyreels_i2v",
    title="SkyReels V1 HunyuanVideo I2V (13B)",
    supported_model="HunyuanVideoSkyreelsI2V",
    model_base="HunyuanVideoSkyreelsI2V",
    config=frozen_config({**hunyuan_video.RECIPE.config, "in_channels": 32}),
)
