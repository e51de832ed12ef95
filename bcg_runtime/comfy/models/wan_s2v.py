"""Wan 2.2 S2V (``WAN22_S2V``; ``comfy.ldm.wan.model.WanModel_S2V``, 0.8.0 and 0.33.0).

What the forward adds to Wan's (ComfyUI 0.33.0, comfy/ldm/wan/model.py):

- ``audio_embed`` [B, 25, 1024, frames] (wav2vec2 features), ``reference_latent``,
  ``reference_motion`` and ``control_video`` (latents; ``WAN22_S2V.extra_conds``, model_base.py
  l.1866): tensor arguments, in the key by shape (present or not), values in the graph's inputs.
- ``forward_orig`` (l.1348): ``audio_embed[..., :T*4]``, ``max(30, time + 9)`` and the
  ``torch.zeros`` made for the reference timesteps are shapes; ``AudioInjector_WAN`` (l.1197)
  picks its layer by the block index (config).
- ``FramePackMotioner.forward`` (l.1245) builds ``torch.zeros(...)`` on the host and copies it
  to the GPU (``.to(device=...)``) every call: a pageable copy of a value made of shapes alone,
  staged through a pinned buffer like Wan's ``sinusoidal_embedding_1d`` constant
  (``stage_host_copies``; the proof replay would show a value that was not constant).
- No ``.item()``, ``nonzero`` or value-dependent branch.
"""

from . import wan
from .wan import variant

ADAPTER = variant("wan_s2v", "Wan S2V", ("WAN22_S2V",))

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS
