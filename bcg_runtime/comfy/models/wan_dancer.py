"""Wan 2.2 WanDancer (``WAN22_WanDancer``; ``comfy.ldm.wan.model_wandancer.WanDancerModel``, 0.33.0).

What the forward adds to Wan's (ComfyUI 0.33.0, comfy/ldm/wan/model_wandancer.py):

- ``audio_embed`` [B, frames, 35] (music features) and ``clip_fea_ref`` (the reference image's
  CLIP features; ``WAN22_WanDancer.extra_conds``, model_base.py l.2086): tensor arguments, in the
  key by shape (present or not), values in the graph's inputs.
- ``fps`` and ``audio_inject_scale``: ``CONDConstant`` Python floats (nodes_wandancer.py l.769),
  constants in the key. ``int(fps + 0.5) != 30`` (l.115, l.194, l.246) is a host branch on that
  constant (the global patch embedding, head and time positions), so each frame rate is its own
  graph.
- ``rope_encode`` (l.221): ``torch.arange`` on the device, ``positions_new[-1] = ...`` a Python
  number from shapes and fps; the music encoder's positions are a device ``arange``.
- No host sync or value-dependent branch beyond Wan's (``wan.py``).
"""

from . import wan
from .wan import variant

ADAPTER = variant("wan_dancer", "WanDancer", ("WAN22_WanDancer",))

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS
