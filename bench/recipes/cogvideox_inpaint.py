"""CogVideoX-Fun V1.5 5B InP: the synthetic-checkpoint recipe ``cogvideox_inpaint`` (a tool). The adapter and warm-
up facts it reads are ``bcg_runtime/comfy/models/cogvideox_inpaint.py``'s, which never imports this."""

import dataclasses

from bcg_runtime.comfy.models.cogvideox_inpaint import ADAPTER, FACTS

from ..recipe import frozen_config
from . import cogvideox

#: CogVideoX-Fun-V1.5-5b-InP: 48 input channels, 2x2x2 Linear patches, 3-D RoPE.
RECIPE = dataclasses.replace(
    cogvideox.RECIPE,
    adapter=ADAPTER,
    facts=FACTS,
    name="cogvideox_inpaint",
    title="CogVideoX-Fun V1.5 5B InP",
    supported_model="CogVideoX_Inpaint",
    config=frozen_config({**cogvideox.RECIPE.config, "in_channels": 48, "patch_size_t": 2}),
)
