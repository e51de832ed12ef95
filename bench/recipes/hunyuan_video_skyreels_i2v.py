"""SkyReels V1 HunyuanVideo I2V (13B): the synthetic-checkpoint recipe ``hunyuan_video_skyreels_i2v`` (a tool). The
adapter and warm-up facts it reads are ``bcg_runtime/comfy/models/hunyuan_video_skyreels_i2v.py``'s, which never
imports this."""

import dataclasses

from bcg_runtime.comfy.models.hunyuan_video_skyreels_i2v import FACTS

from ..recipe import frozen_config
from . import hunyuan_video

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
