"""Wan Animate 2 14B: the synthetic-checkpoint recipe ``wan_animate2`` (a tool). The adapter and warm-up facts it
reads are ``bcg_runtime/comfy/models/wan_animate2.py``'s, which never imports this."""

from bcg_runtime.comfy.models.wan_animate2 import ADAPTER

from .wan import variant_recipe

#: Wan Animate 2 14B: the I2V layout (``in_dim`` 36, CLIP image embedding), detected from metadata.
RECIPE = variant_recipe(
    ADAPTER,
    "wan_animate2",
    "Wan Animate 2 14B",
    "WAN_Animate2",
    "WAN_Animate2",
    {"model_type": "animate2", "in_dim": 36},
    ldm_class="comfy.ldm.wan.model_animate2:WanAnimate2Model",
    metadata_keys=("model_type",),
)
