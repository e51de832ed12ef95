"""Cosmos-Predict2 2B Video2World: the synthetic-checkpoint recipe ``cosmos_predict2_i2v`` (a tool). The adapter
and warm-up facts it reads are ``bcg_runtime/comfy/models/cosmos_predict2_i2v.py``'s, which never imports this."""

import dataclasses

from bcg_runtime.comfy.models.cosmos_predict2_i2v import ADAPTER, FACTS

from ..recipe import frozen_config
from . import cosmos_predict2

#: Cosmos-Predict2-2B-Video2World: 2048 wide, 28 blocks, 17 input channels, the I2V RoPE
#: extrapolation of 0.33.0 comfy/model_detection.py:872-876 (3.0 / 3.0 / 1.0).
RECIPE = dataclasses.replace(
    cosmos_predict2.RECIPE,
    adapter=ADAPTER,
    facts=FACTS,
    name="cosmos_predict2_i2v",
    title="Cosmos-Predict2 2B Video2World",
    supported_model="CosmosI2VPredict2",
    config=frozen_config(
        {
            **cosmos_predict2.RECIPE.config,
            "in_channels": 17,
            "rope_h_extrapolation_ratio": 3.0,
            "rope_w_extrapolation_ratio": 3.0,
            "rope_t_extrapolation_ratio": 1.0,
        }
    ),
)
