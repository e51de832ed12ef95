"""Wan 2.1 SCAIL-2 14B: the synthetic-checkpoint recipe ``wan_scail2`` (a tool). The adapter and warm-up facts it
reads are ``bcg_runtime/comfy/models/wan_scail2.py``'s, which never imports this."""

from bcg_runtime.comfy.models.wan_scail import ADAPTER

from .wan import variant_recipe

#: SCAIL-2 14B: SCAIL's layout plus the 28-channel identity-mask patch embedding.
RECIPE = variant_recipe(
    ADAPTER,
    "wan_scail2",
    "Wan 2.1 SCAIL-2 14B",
    "WAN21_SCAIL2",
    "WAN21_SCAIL2",
    {"model_type": "scail2", "in_dim": 20},
    ldm_class="comfy.ldm.wan.model:SCAIL2WanModel",
)
