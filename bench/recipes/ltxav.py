"""LTX-2 19B (audio + video): the synthetic-checkpoint recipe ``ltxav`` (a tool). The adapter and warm-up facts it
reads are ``bcg_runtime/comfy/models/ltxav.py``'s, which never imports this."""

from bcg_runtime.comfy.models.ltxav import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like LTX-2 19B: 48 layers; video 32
#: heads of 128 (4096), audio 32 heads of 64 (2048); Gemma 3 12B context projected to 3840; video
#: latent 128 channels at 32x spatial, 8x temporal; audio latent 8 x 16 bins. Detection reads the
#: depth and widths from the layout and the connectors' depth from the checkpoint's metadata
#: config (``metadata_keys``); everything else is the class's defaults, which are LTX-2's.
RECIPE = FamilyInfo(
    name="ltxav",
    adapter=ADAPTER,
    facts=FACTS,
    title="LTX-2 19B (audio + video)",
    ldm_class="comfy.ldm.lightricks.av_model:LTXAVModel",
    supported_model="LTXAV",
    model_base="LTXAV",
    latent_format="LTXAV",
    hidden_size=4096,
    num_heads=32,
    text_encoder="Gemma 3 12B, the prompt's own tokens; the DiT's connectors pad to 1024",
    latent_dimensions=3,
    # The embeddings connectors' layers count as depth (the metadata's connector_num_layers): a
    # depth-1 model has one of each, the CPU tests' size.
    depth_keys=("num_layers", "connector_num_layers"),
    real_depth=(48, 2),
    block_attrs=("transformer_blocks", "video_embeddings_connector.transformer_1d_blocks"),
    default_steps=20,
    default_cfg=4.0,
    config=frozen_config(
        {
            "image_model": "ltxav",
            "num_layers": 48,
            "attention_head_dim": 128,
            "cross_attention_dim": 4096,
            "use_keyframes_abs_pos_embedding": False,
            "connector_num_layers": 2,
        }
    ),
    added_later=frozen_config({"use_keyframes_abs_pos_embedding": False}),
    metadata_keys=("connector_num_layers",),
    prompt_lengths=(40, 17),  # both reach the DiT as 1024 tokens (the connectors' registers)
)
