"""Wan 2.1 SCAIL / SCAIL-2 pose animation (``WAN21_SCAIL``, ``WAN21_SCAIL2``;
``comfy.ldm.wan.model.SCAILWanModel`` / ``SCAIL2WanModel``, 0.33.0 only).

Wan's adapter (``wan.py``: its text rule and host-copy staging, nothing refused) with the inputs
SCAIL adds: ``reference_latent`` and ``pose_latents`` (SCAIL-2 also ``sam_latents`` and
``ref_mask_latents``) are tensor arguments, in the key by shape and presence, their values copied
into the graph's inputs at every replay. SCAIL-2's ``ref_mask_flag`` is a ``CONDConstant`` Python
bool, a constant in the key: the forward branches on it on the host, so replacement mode (False)
is its own graph. Positions are Python numbers from shapes. No host sync or value-dependent branch
beyond Wan's, so mode 'full' is safe. Source audit: tests/comfy/test_wan_variants.py.
"""

from . import wan
from .wan import variant

ADAPTER = variant("wan_scail", "Wan SCAIL", ("WAN21_SCAIL", "WAN21_SCAIL2"))

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS
