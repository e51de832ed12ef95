"""Wan 2.1 VACE (``WAN21_Vace``; ``comfy.ldm.wan.model.VaceWanModel``, 0.8.0 and 0.33.0).

What the forward adds to Wan's (``wan.py`` names the shared parts; ComfyUI 0.33.0,
comfy/ldm/wan/model.py):

- ``vace_context`` [B, N, 96, T, H, W] (``WAN21_Vace.extra_conds``, model_base.py l.1711: each
  WanVaceToVideo node's control video latent and mask, stacked; zeros and ones when none): a
  tensor argument, in the key by shape, its values copied into the graph's inputs.
- ``vace_strength`` (a ``CONDConstant`` list of Python floats, one per VACE input): a constant,
  its values are in the key (another strength is another graph; l.847 multiplies by it).
- ``forward_orig`` (l.785): ``vace_layers_mapping.get(i)`` (l.843) and ``range(len(c))`` are
  facts of the config and of ``vace_context``'s shape; ``x += c_skip * ...`` is in place on the
  forward's own tensor. No host sync or value-dependent branch beyond Wan's.
"""

from . import wan
from .wan import variant, variant_recipe

ADAPTER = variant("wan_vace", "Wan VACE", ("WAN21_Vace",))

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS

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
