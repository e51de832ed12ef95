"""Wan 2.1 VACE 14B: the synthetic-checkpoint recipe ``wan_vace`` (a tool). The adapter and warm-up facts it reads
are ``bcg_runtime/comfy/models/wan_vace.py``'s, which never imports this."""

from bcg_runtime.comfy.models.wan_vace import ADAPTER

from .wan import variant_recipe

#: Wan2.1-VACE-14B: 40 blocks with 8 VACE blocks (one every 5th), ``vace_in_dim`` 96 (32-channel
#: control latent and a 64-channel mask).
RECIPE = variant_recipe(
    ADAPTER,
    "wan_vace",
    "Wan 2.1 VACE 14B",
    "WAN21_Vace",
    "WAN21_Vace",
    {"model_type": "vace", "vace_in_dim": 96, "vace_layers": 8},
    ldm_class="comfy.ldm.wan.model:VaceWanModel",
    depth_keys=("num_layers", "vace_layers"),
    real_depth=(40, 8),
    block_attrs=("blocks", "vace_blocks"),
    gpu_test_depth=(10, 2),
)
