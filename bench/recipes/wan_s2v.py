"""Wan 2.2 S2V 14B: the synthetic-checkpoint recipe ``wan_s2v`` (a tool). The adapter and warm-up facts it reads
are ``bcg_runtime/comfy/models/wan_s2v.py``'s, which never imports this."""

from bcg_runtime.comfy.models.wan_s2v import ADAPTER

from .wan import variant_recipe

#: Wan2.2-S2V-14B: the T2V layout with the audio encoder and injectors (every 3rd-4th block), the
#: motion frame packer and a control-video encoder.
RECIPE = variant_recipe(
    ADAPTER,
    "wan_s2v",
    "Wan 2.2 S2V 14B",
    "WAN22_S2V",
    "WAN22_S2V",
    {"model_type": "s2v"},
    ldm_class="comfy.ldm.wan.model:WanModel_S2V",
)
