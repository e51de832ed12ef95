"""HunyuanVideo 1.0 image-to-video (``HunyuanVideoI2V``): the ``hunyuan_video`` adapter (same
class, same forward; ``hunyuan_video.py`` names how each I2V input reaches the key) with a recipe
of the I2V checkpoint's layout: ``img_in`` over 33 channels (latent 16, start image 16, inverted
mask 1; 0.33.0 comfy/supported_models.py:1038-1046)."""

import dataclasses

from . import hunyuan_video
from .recipe import frozen_config

ADAPTER = hunyuan_video.ADAPTER

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = hunyuan_video.FACTS

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
