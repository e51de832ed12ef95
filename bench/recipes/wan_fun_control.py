"""Wan 2.1 Fun 14B Control: the synthetic-checkpoint recipe ``wan_fun_control`` (a tool). The adapter and warm-up
facts it reads are ``bcg_runtime/comfy/models/wan_fun_control.py``'s, which never imports this."""

from bcg_runtime.comfy.models.wan_fun_control import ADAPTER

from .wan import variant_recipe

#: Wan2.1-Fun-14B-Control: the I2V layout (CLIP image embedding) with ``in_dim`` 48.
RECIPE = variant_recipe(
    ADAPTER,
    "wan_fun_control",
    "Wan 2.1 Fun 14B Control",
    "WAN21_FunControl2V",
    "WAN21",
    {"model_type": "i2v", "in_dim": 48},
)
