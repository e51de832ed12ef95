"""HunyuanVideo 1.0 I2V (13B): the synthetic-checkpoint recipe ``hunyuan_video_i2v`` (a tool). The adapter and
warm-up facts it reads are ``bcg_runtime/comfy/models/hunyuan_video_i2v.py``'s, which never imports this."""

import dataclasses

from bcg_runtime.comfy.models.hunyuan_video_i2v import FACTS

from ..recipe import frozen_config
from . import hunyuan_video

#: HunyuanVideo-I2V (13B, ``hunyuan_video_image_to_video_720p``): the T2V shape with 33 input channels.
RECIPE = dataclasses.replace(
    hunyuan_video.RECIPE,
    facts=FACTS,
    name="hunyuan_video_i2v",
    title="HunyuanVideo 1.0 I2V (13B)",
    supported_model="HunyuanVideoI2V",
    model_base="HunyuanVideoI2V",
    config=frozen_config({**hunyuan_video.RECIPE.config, "in_channels": 33}),
)
