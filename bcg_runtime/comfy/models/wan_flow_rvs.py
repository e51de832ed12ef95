"""Wan 2.1 FlowRVS (``WAN21_FlowRVS``; Wan's own ``WanModel`` in T2V layout, 0.33.0 only).

``WAN21_FlowRVS`` (model_base.py l.1941) builds a plain T2V ``WanModel`` and samples it as
``ModelType.IMG_TO_IMG_FLOW`` (the video's latent is the flow's start, not noise): what changes
is outside the DiT (the sampler's inputs), and every DiT call is Wan's forward (``wan.py``).
ComfyUI tells the checkpoint apart only by its safetensors metadata (``transformer.model_type``
``flow_rvs``, model_detection.py l.775), which the recipe (``bench/recipes/wan_flow_rvs.py``)
carries.
"""

from . import wan
from .wan import variant

ADAPTER = variant("wan_flow_rvs", "Wan FlowRVS", ("WAN21_FlowRVS",))

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS
