"""Wan Animate 2 (``WAN_Animate2``; ``comfy.ldm.wan.model_animate2.WanAnimate2Model``, 0.33.0 only).

What the forward adds to Wan's (ComfyUI 0.33.0, comfy/ldm/wan/model_animate2.py):

- ``pose_latents`` (the pose video's latent, one frame fewer than ``x``: frame 0 is the reference
  slot), ``clip_fea_pose`` and ``context_pose`` (``WAN_Animate2.extra_conds``, model_base.py
  l.1833): tensor arguments, in the key by shape (present or not: outside the node's pose window
  the call carries none), values in the graph's inputs. The frame check (l.292) raises on shapes.
- ``pose_strength`` / ``reference_strength``: ``CONDConstant`` Python floats, constants in the key;
  ``!= 1.0`` (l.371, l.49) are host branches on them.
- ``forward_gen`` (l.45) runs attention once per latent frame (``range(f_gen)``, a shape) into
  buffers the forward allocates (l.354): in mode breakable each is a break like any attention.
- The ``WanAnimate2Cache`` node's ``PoseBranchCache`` (l.113, ``transformer_options["animate2_cache"]``)
  keeps the pose branch's block inputs across steps and picks its slot on the host
  (``torch.equal`` l.142, ``stream.synchronize`` l.137): state across calls no graph follows.
  BCG's key does not know that entry, so such calls run eager naming it
  (``unknown transformer_options entry 'animate2_cache'``).
- ComfyUI tells the checkpoint apart only by its safetensors metadata (``transformer.model_type``
  ``animate2``, model_detection.py l.775; the layout is I2V's), which the recipe (``bench/recipes/wan_animate2.py``)
  carries.
"""

from . import wan
from .wan import variant

ADAPTER = variant("wan_animate2", "Wan Animate 2", ("WAN_Animate2",))

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS
