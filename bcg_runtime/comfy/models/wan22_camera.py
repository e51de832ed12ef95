"""Wan 2.2 Fun Camera (``WAN22_Camera``): the second recipe of the Wan Fun Camera family
(``wan_camera.py`` names what its forward adds and how it is keyed)."""

from . import wan
from .wan import variant_recipe
from .wan_camera import ADAPTER  # this recipe's family

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS

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
