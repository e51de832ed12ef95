"""Cosmos 1.0 Diffusion 7B Video2World: the synthetic-checkpoint recipe ``cosmos_i2v`` (a tool). The adapter and
warm-up facts it reads are ``bcg_runtime/comfy/models/cosmos_i2v.py``'s, which never imports this."""

import dataclasses

from bcg_runtime.comfy.models.cosmos_i2v import FACTS

from ..recipe import frozen_config
from . import cosmos

#: Cosmos-1.0-Diffusion-7B-Video2World: the Text2World shape with 17 input channels.
RECIPE = dataclasses.replace(
    cosmos.RECIPE,
    facts=FACTS,
    name="cosmos_i2v",
    title="Cosmos 1.0 Diffusion 7B Video2World",
    supported_model="CosmosI2V",
    config=frozen_config({**cosmos.RECIPE.config, "in_channels": 17}),
)
