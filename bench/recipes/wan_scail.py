"""Wan 2.1 SCAIL 14B: the synthetic-checkpoint recipe ``wan_scail`` (a tool). The adapter and warm-up facts it
reads are ``bcg_runtime/comfy/models/wan_scail.py``'s, which never imports this."""

from bcg_runtime.comfy.models.wan_scail import ADAPTER

from .wan import variant_recipe

#: SCAIL-Preview 14B: the I2V layout with ``in_dim`` 20 (latent and a 4-channel mask) and a pose
#: patch embedding.
RECIPE = variant_recipe(
    ADAPTER,
    "wan_scail",
    "Wan 2.1 SCAIL 14B",
    "WAN21_SCAIL",
    "WAN21_SCAIL",
    {"model_type": "scail", "in_dim": 20},
    ldm_class="comfy.ldm.wan.model:SCAILWanModel",
)
