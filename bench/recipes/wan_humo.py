"""Wan 2.1 HuMo 17B: the synthetic-checkpoint recipe ``wan_humo`` (a tool). The adapter and warm-up facts it reads
are ``bcg_runtime/comfy/models/wan_humo.py``'s, which never imports this."""

from bcg_runtime.comfy.models.wan_humo import ADAPTER

from .wan import variant_recipe

#: HuMo 17B: Wan 2.1 14B's width with audio cross-attention in every block, ``in_dim`` 36.
RECIPE = variant_recipe(
    ADAPTER,
    "wan_humo",
    "Wan 2.1 HuMo 17B",
    "WAN21_HuMo",
    "WAN21_HuMo",
    {"model_type": "humo", "in_dim": 36},
    ldm_class="comfy.ldm.wan.model:HumoWanModel",
)
