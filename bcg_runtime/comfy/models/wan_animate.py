"""Wan 2.2 Animate (``WAN22_Animate``; ``comfy.ldm.wan.model_animate.AnimateWanModel``), ComfyUI 0.8.0
and 0.33.0 (0.33 adds ``double_block`` patches, which make a call eager in options.py).

Wan's I2V forward (``wan.py`` reads it: the start image and mask as channels of ``x``, CLIP
features as ``clip_fea``, umT5 padded to 512 tokens) with two more inputs, both from
``WAN22_Animate.extra_conds`` (model_base.py:1808-1818) as tensor arguments, in the key by shape
and presence and read live at every replay:

- ``pose_latents`` (the pose video's latent): embedded by ``pose_patch_embedding`` and added in
  place into the patch tokens of frames 1.. (``after_patch_embedding``, model_animate.py:452-454),
  a tensor the forward just made; the slice bounds are shapes.
- ``face_pixel_values`` (the face video, 512x512 px a frame): the motion encoder runs over it in
  batches of 8 frames (l.463-464: ``range(math.ceil(frames / 8))``, a shape), then the face
  encoder, and the result is padded or cut to the latent frame count (l.471-480, shapes); every
  fifth block adds a face-adapter block's output (l.549-550, ``i % 5``: the block index). The
  padding zeros are made on the host and moved by ``type_as`` (l.472, l.477): host-built constants
  of shapes alone, staged like ``sinusoidal_embedding_1d``'s ``arange`` (``stage_host_copies``,
  every Wan variant's). ``Direction.forward`` (l.378-383) orthonormalises a weight with
  ``torch.linalg.qr`` in every call with a face video: a cuSOLVER kernel on CUDA; were the capture
  to refuse it, that shape's capture fails and its calls run eager with the reason (a failed
  capture is never stored), which the H200 test shows.

ComfyUI tells the checkpoint apart by ``face_adapter.fuser_blocks.0.k_norm.weight``
(model_detection.py:758-759), and the adapter has ``num_layers // 5`` blocks (l.440): a checkpoint
of fewer than 5 blocks is detected as plain I2V, so the recipe's ``smallest_depth`` is 5. No
``.item()``, ``.tolist()`` or ``.cpu()`` in the forward; ``WanModel.forward`` runs it through the
DIFFUSION_MODEL ``WrapperExecutor``.
"""

from . import wan
from .wan import variant

ADAPTER = variant("wan_animate", "Wan Animate", ("WAN22_Animate",))

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS
