"""FLUX.1 Fill [dev]: the synthetic-checkpoint recipe ``flux_fill`` (a tool). The adapter and warm-up facts it
reads are ``bcg_runtime/comfy/models/flux_fill.py``'s, which never imports this."""

import dataclasses

from bcg_runtime.comfy.models.flux_fill import ADAPTER, FACTS

from ..recipe import frozen_config
from . import flux

#: FLUX.1 Fill [dev]: FLUX.1-dev's shape with ``img_in`` over 96 channels (x 16 + masked image 16
#: + mask 64) and the distilled guidance (FluxGuidance 30 in its workflows).
RECIPE = dataclasses.replace(
    flux.RECIPE,
    adapter=ADAPTER,
    facts=FACTS,
    name="flux_fill",
    title="FLUX.1 Fill [dev]",
    supported_model="FluxInpaint",
    config=frozen_config({**flux.RECIPE.config, "in_channels": 96}),
)
