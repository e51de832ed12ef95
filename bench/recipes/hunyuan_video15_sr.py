"""HunyuanVideo 1.5 SR distilled (8.3B): the synthetic-checkpoint recipe ``hunyuan_video15_sr`` (a tool). The
adapter and warm-up facts it reads are ``bcg_runtime/comfy/models/hunyuan_video15_sr.py``'s, which never imports
this."""

import dataclasses

from bcg_runtime.comfy.models.hunyuan_video15_sr import ADAPTER, FACTS

from ..recipe import frozen_config
from . import hunyuan_video15

#: HunyuanVideo-1.5 720p / 1080p SR distilled: the 8.3B shape with ``img_in`` over 98 channels
#: (latent 32, the SR condition 66), without ``time_r_in`` (the layout a non-meanflow checkpoint
#: has; ``tests/comfy/test_coverage_variants.py`` adds it to show the refusal).
RECIPE = dataclasses.replace(
    hunyuan_video15.RECIPE,
    adapter=ADAPTER,
    facts=FACTS,
    name="hunyuan_video15_sr",
    title="HunyuanVideo 1.5 SR distilled (8.3B)",
    supported_model="HunyuanVideo15_SR_Distilled",
    model_base="HunyuanVideo15_SR_Distilled",
    default_steps=6,
    default_cfg=1.0,
    config=frozen_config({**hunyuan_video15.RECIPE.config, "in_channels": 98}),
)
