"""Wan Animate 2 (``WAN_Animate2``; ``comfy.ldm.wan.model_animate2.WanAnimate2Model``, 0.33.0 only).

Wan's adapter (``wan.py``: its text rule and host-copy staging) with the inputs Animate 2 adds:
``pose_latents``, ``clip_fea_pose`` and ``context_pose`` are tensor arguments, in the key by shape
and presence (outside the node's pose window the call carries none), their values copied into the
graph's inputs. ``pose_strength`` / ``reference_strength`` are ``CONDConstant`` Python floats,
constants in the key, which the forward's host branches test. Run eager: the ``WanAnimate2Cache``
node's cache (``transformer_options["animate2_cache"]``) keeps the pose branch's inputs across steps
and picks its slot on the host, state no graph follows; BCG's key does not know that entry, so
such calls run eager naming it. The forward's other host branches read shapes. ComfyUI tells the
checkpoint apart only by its safetensors metadata, which the recipe carries. Source audit:
tests/comfy/test_wan_variants.py.
"""

from . import wan
from .wan import variant

ADAPTER = variant("wan_animate2", "Wan Animate 2", ("WAN_Animate2",))

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS
