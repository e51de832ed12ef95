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
from .wan import variant

ADAPTER = variant("wan_vace", "Wan VACE", ("WAN21_Vace",))

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS
