"""Wan 2.1 HuMo (``WAN21_HuMo``; ``comfy.ldm.wan.model.HumoWanModel``, 0.8.0 and 0.33.0).

What the forward adds to Wan's (ComfyUI 0.33.0, comfy/ldm/wan/model.py):

- ``audio_embed`` [B, T, 8, 5, 1280] (Whisper features per latent frame, ``WAN21_HuMo.extra_conds``,
  model_base.py l.1763) and ``reference_latent`` (the reference image's latent, with mask channels
  for the 17B model): tensor arguments, in the key by shape (present or not), values in the
  graph's inputs.
- ``forward_orig`` (l.1628) pads the audio with zeros for the reference frames (shapes),
  ``AudioProjModel`` (l.1578) and ``WanT2VCrossAttentionGather`` (l.1448) reshape by shapes.
  The 17B model's ``c_concat`` (zero-VAE values built on the host in ``extra_conds``) is made
  outside the DiT and reaches it as channels of ``x``.
- No host sync or value-dependent branch beyond Wan's (``wan.py``).
"""

from . import wan
from .wan import variant

ADAPTER = variant("wan_humo", "Wan HuMo", ("WAN21_HuMo",))

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS
