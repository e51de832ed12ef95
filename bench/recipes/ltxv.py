"""LTX-Video 2B: the synthetic-checkpoint recipe ``ltxv`` (a tool). The adapter and warm-up facts it reads are
``bcg_runtime/comfy/models/ltxv.py``'s, which never imports this."""

from bcg_runtime.comfy.models.ltxv import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like LTX-Video 2B (0.9.x): 28 layers,
#: 32 heads of 64 (2048), cross-attention 2048, T5-XXL captions (4096), 128-channel latent at 32x
#: spatial and 8x temporal (8k+1 frames). Without a checkpoint's metadata config.
RECIPE = FamilyInfo(
    name="ltxv",
    adapter=ADAPTER,
    facts=FACTS,
    title="LTX-Video 2B",
    ldm_class="comfy.ldm.lightricks.model:LTXVModel",
    supported_model="LTXV",
    model_base="LTXV",
    latent_format="LTXV",
    hidden_size=2048,
    num_heads=32,
    text_encoder="T5-XXL, padded to 128 tokens with an attention mask",
    latent_dimensions=3,
    depth_keys=("num_layers",),
    real_depth=(28,),
    block_attrs=("transformer_blocks",),
    default_steps=30,
    default_cfg=3.0,
    config=frozen_config(
        {
            "image_model": "ltxv",
            "num_layers": 28,
            "attention_head_dim": 64,
            "cross_attention_dim": 2048,
            # 0.33 detection reads it from the layout (LTX-2.3 checkpoints have the parameter).
            "use_keyframes_abs_pos_embedding": False,
        }
    ),
    # 0.8.0's class and detection have no such key (no keyframe embedding: the same model).
    added_later=frozen_config({"use_keyframes_abs_pos_embedding": False}),
    prompt_lengths=(128, 128),  # the T5 tokenizer pads every prompt to 128 tokens
)
