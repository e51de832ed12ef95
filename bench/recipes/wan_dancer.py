"""Wan 2.2 WanDancer 14B: the synthetic-checkpoint recipe ``wan_dancer`` (a tool). The adapter and warm-up facts it
reads are ``bcg_runtime/comfy/models/wan_dancer.py``'s, which never imports this."""

from bcg_runtime.comfy.models.wan_dancer import ADAPTER

from .wan import variant_recipe

#: WanDancer 14B: the I2V layout (``in_dim`` 36) with the music encoder and injectors, a global
#: patch embedding and head for other frame rates. The checkpoint's unused ``ref_conv`` is left
#: out (``in_dim_ref_conv`` unset: the forward reads it only with a ``reference_latent``, which
#: no WanDancer node sends).
RECIPE = variant_recipe(
    ADAPTER,
    "wan_dancer",
    "Wan 2.2 WanDancer 14B",
    "WAN22_WanDancer",
    "WAN22_WanDancer",
    {"model_type": "wandancer", "in_dim": 36},
    ldm_class="comfy.ldm.wan.model_wandancer:WanDancerModel",
)
