"""CogVideoX-5B-I2V: the synthetic-checkpoint recipe ``cogvideox_i2v`` (a tool). The adapter and warm-up facts it
reads are ``bcg_runtime/comfy/models/cogvideox_i2v.py``'s, which never imports this."""

import dataclasses

from bcg_runtime.comfy.models.cogvideox_i2v import ADAPTER, FACTS

from ..recipe import frozen_config
from . import cogvideox

#: CogVideoX-5B-I2V: 32 input channels and the learned positional table of its 49-frame 720x480
#: training size (226 text rows + 13 x 30 x 45 patches).
RECIPE = dataclasses.replace(
    cogvideox.RECIPE,
    adapter=ADAPTER,
    facts=FACTS,
    name="cogvideox_i2v",
    title="CogVideoX-5B-I2V",
    supported_model="CogVideoX_I2V",
    config=frozen_config(
        {
            **cogvideox.RECIPE.config,
            "in_channels": 32,
            "use_learned_positional_embeddings": True,
            "use_rotary_positional_embeddings": False,
        }
    ),
)
