"""LTX-2.3 22B: the ``ltxav`` adapter (same class, same forward, same text policy) with a recipe of
2.3's layout.

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
from .recipe import frozen_config

ADAPTER = ltxav.ADAPTER

#: The checkpoint metadata's transformer keys ComfyUI's LTXAVModel reads (LTX-2.3 22B's values).
_METADATA = {
    "caption_proj_before_connector": True,
    "caption_projection_first_linear": False,
    "cross_attention_adaln": True,
    "apply_gated_attention": True,
    "connector_apply_gated_attention": True,
    "connector_num_layers": 8,
    "connector_num_attention_heads": 32,
    "connector_attention_head_dim": 128,
    "audio_connector_num_attention_heads": 32,
    "audio_connector_attention_head_dim": 64,
    "causal_temporal_positioning": True,
    "use_middle_indices_grid": True,
    "av_ca_timestep_scale_multiplier": 1000.0,
    "rope_type": "split",
    "frequencies_precision": "float64",
}

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = dataclasses.replace(ltxav.FACTS, text_dim=6144)

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like LTX-2.3 22B: LTX-2's recipe
#: (widths, 48 layers, video 4096 / audio 2048, defaults) with 2.3's metadata config above, its
#: 8-layer connectors and its 6144-wide Gemma 3 context.
RECIPE = dataclasses.replace(
    ltxav.RECIPE,
    facts=FACTS,
    name="ltxav23",
    title="LTX-2.3 22B (audio + video)",
    text_encoder="Gemma 3 12B (dual projection: 4096 video + 2048 audio), the prompt's own tokens; the DiT's connectors pad to 1024",
    real_depth=(48, 8),
    config=frozen_config({**ltxav.RECIPE.config, **_METADATA}),
    metadata_keys=tuple(_METADATA),
)
