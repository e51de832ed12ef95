"""Wan 2.1 Fun 14B Camera: the synthetic-checkpoint recipe ``wan_camera`` (a tool). The adapter and warm-up facts
it reads are ``bcg_runtime/comfy/models/wan_camera.py``'s, which never imports this."""

from bcg_runtime.comfy.models.wan_camera import ADAPTER

from .wan import variant_recipe

#: Wan2.1-Fun-14B-Control-Camera: I2V layout, ``in_dim`` 32, camera adapter from 24 channels.
RECIPE = variant_recipe(
    ADAPTER,
    "wan_camera",
    "Wan 2.1 Fun 14B Camera",
    "WAN21_Camera",
    "WAN21_Camera",
    {"model_type": "camera", "in_dim": 32},
    ldm_class="comfy.ldm.wan.model:CameraWanModel",
)
