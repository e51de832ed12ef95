"""Wan Fun Camera (``WAN21_Camera``, ``WAN22_Camera``; ``comfy.ldm.wan.model.CameraWanModel``).

What the forward adds to Wan's (ComfyUI 0.33.0, comfy/ldm/wan/model.py):

- ``camera_conditions`` [B, 24, T, H_px, W_px] (the Plücker embedding WanCameraEmbedding makes,
  handed on by ``WAN21_Camera.extra_conds``, model_base.py l.1751): a tensor argument, in the key
  by shape (present or not), its values copied into the graph's inputs. ``WanCamAdapter``
  (l.316) reshapes by ``x.size()`` and runs PixelUnshuffle, convolutions and a ReLU: no host read.
- Wan 2.1 Camera (``in_dim`` 32) has the I2V layout (CLIP features as ``clip_fea``); Wan 2.2
  Camera (``camera_2.2``, ``in_dim`` 36) the T2V one; the start image and mask are channels of
  ``x`` (``concat_cond``). The rest is Wan's forward (``wan.py``).
"""

from . import wan
from .wan import variant

ADAPTER = variant("wan_camera", "Wan Fun Camera", ("WAN21_Camera", "WAN22_Camera"))

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS
