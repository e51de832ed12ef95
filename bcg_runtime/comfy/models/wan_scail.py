"""Wan 2.1 SCAIL / SCAIL-2 pose animation (``WAN21_SCAIL``, ``WAN21_SCAIL2``;
``comfy.ldm.wan.model.SCAILWanModel`` / ``SCAIL2WanModel``, 0.33.0 only).

What the forward adds to Wan's (ComfyUI 0.33.0, comfy/ldm/wan/model.py):

- ``reference_latent`` (the reference frames with a ones mask, stacked on time) and
  ``pose_latents`` (the pose video's latent and mask; ``WAN21_SCAIL.extra_conds``, model_base.py
  l.1953): tensor arguments, in the key by shape (present or not), values in the graph's inputs.
  ``forward_orig`` (l.1708) concatenates them and slices by their shapes.
- ``rope_encode`` (l.1790): positions from shapes (``h / H_pose`` and the shifts are Python
  numbers from shapes), the ``rope_options`` Wan's key already holds.
- SCAIL-2 adds ``sam_latents`` / ``ref_mask_latents`` (tensors, in the key by shape) and
  ``ref_mask_flag``, a ``CONDConstant`` Python bool the SCAIL-2 node sets (nodes_scail.py l.184):
  a constant in the key; ``bool(ref_mask_flag)`` (l.1798) is a host branch on that constant,
  so replacement mode (False) is its own graph.
- No host sync or value-dependent branch beyond Wan's (``wan.py``).
"""

from . import wan
from .wan import variant

ADAPTER = variant("wan_scail", "Wan SCAIL", ("WAN21_SCAIL", "WAN21_SCAIL2"))

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS
