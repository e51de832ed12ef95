"""LTX-2.3 22B: the ``ltxav`` adapter (same class, same forward, same text policy) with a recipe of
2.3's layout (``bench/recipes/ltxav23.py``).

ComfyUI's LTX-2 detection reads the depth and two widths from the key layout and everything else
from the checkpoint's safetensors metadata (``{"config": {"transformer": ...}}``, model_detection.py
l.426-427 on 0.33.0); LTX-2.3's metadata turns on cross-attention AdaLN (prompt AdaLN tables),
gated attention, the 8-layer gated embeddings connectors and the caption projection before them,
causal temporal positions, the RoPE's middle indices and float64 frequencies (a numpy grid copied
to the device each call: staged, see ``ltxav``), and its Gemma projection is the dual one (4096
video + 2048 audio = a 6144-wide context). The recipe carries those keys as the synthetic
checkpoint's metadata (``FamilyInfo.metadata_keys``). ComfyUI 0.8.0's ``LTXAVModel`` has none of
these options (it takes any keyword and ignores it): the 2.3 layout is 0.33.0's only.
"""

import dataclasses

from . import ltxav

ADAPTER = ltxav.ADAPTER


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = dataclasses.replace(ltxav.FACTS, text_dim=6144)
