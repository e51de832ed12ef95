"""Wan 2.2 Fun A14B Camera: the synthetic-checkpoint recipe ``wan22_camera`` (a tool). The adapter and warm-up
facts it reads are ``bcg_runtime/comfy/models/wan22_camera.py``'s, which never imports this."""

from bcg_runtime.comfy.models.wan_camera import ADAPTER

from .wan import variant_recipe

#: Wan2.2-Fun-A14B-Control-Camera: T2V layout (no CLIP image embedding), ``in_dim`` 36.
RECIPE = variant_recipe(
    ADAPTER,
    "wan22_camera",
    "Wan 2.2 Fun A14B Camera",
    "WAN22_Camera",
    "WAN21_Camera",
    {"model_type": "camera_2.2", "in_dim": 36},
    ldm_class="comfy.ldm.wan.model:CameraWanModel",
)
