"""Wan 2.2 Animate (``WAN22_Animate``; ``comfy.ldm.wan.model_animate.AnimateWanModel``), ComfyUI 0.8.0
and 0.33.0 (0.33 adds ``double_block`` patches, which make a call eager in options.py).

Wan's I2V forward and adapter (``wan.py``: umT5 text padded to 512 tokens, host-copy staging,
nothing refused) with two more tensor arguments from ``WAN22_Animate.extra_conds``:
``pose_latents`` and ``face_pixel_values`` (the face video), in the key by shape and presence and
read live at every replay. Their loops and slices follow shapes; the face path's padding zeros are
host-built constants of shapes alone, staged like ``sinusoidal_embedding_1d``'s ``arange``
(``stage_host_copies``). ``Direction.forward`` runs ``torch.linalg.qr`` (cuSOLVER on CUDA) on every
call with a face video: were capture to refuse it, that shape's capture fails and its calls run
eager with the reason (a failed capture is never stored). No ``.item()``, ``.tolist()`` or
``.cpu()`` in the forward, so mode 'full' is safe. ComfyUI detects the class only with 5 blocks or
more (one face-adapter block per 5). Source audit: tests/comfy/test_wan_animate.py.
"""

from . import wan
from .wan import variant

ADAPTER = variant("wan_animate", "Wan Animate", ("WAN22_Animate",))

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS
