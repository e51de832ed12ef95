"""LTX-2.3 22B (audio + video): the synthetic-checkpoint recipe ``ltxav23`` (a tool). The adapter and warm-up facts
it reads are ``bcg_runtime/comfy/models/ltxav23.py``'s, which never imports this."""

import dataclasses

from bcg_runtime.comfy.models.ltxav23 import FACTS

from ..recipe import frozen_config
from . import ltxav

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
