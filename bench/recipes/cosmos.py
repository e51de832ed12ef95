"""Cosmos 1.0 Diffusion 7B Text2World: the synthetic-checkpoint recipe ``cosmos`` (a tool). The adapter and warm-up
facts it reads are ``bcg_runtime/comfy/models/cosmos.py``'s, which never imports this."""

from bcg_runtime.comfy.models.cosmos import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like Cosmos-1.0-Diffusion-7B-Text2World.
RECIPE = FamilyInfo(
    name="cosmos",
    adapter=ADAPTER,
    facts=FACTS,
    title="Cosmos 1.0 Diffusion 7B Text2World",
    ldm_class="comfy.ldm.cosmos.model:GeneralDIT",
    supported_model="CosmosT2V",
    model_base="CosmosVideo",
    latent_format="Cosmos1CV8x8x8",
    hidden_size=4096,
    num_heads=32,
    text_encoder="T5-XXL (old), padded to 512 tokens",
    latent_dimensions=3,
    depth_keys=("num_blocks",),
    real_depth=(28,),
    block_attrs=("blocks",),
    default_steps=35,
    default_cfg=7.0,
    config=frozen_config(
        {
            "image_model": "cosmos",
            "max_img_h": 240,
            "max_img_w": 240,
            "max_frames": 128,
            "in_channels": 16,
            "out_channels": 16,
            "patch_spatial": 2,
            "patch_temporal": 1,
            "model_channels": 4096,
            "block_config": "FA-CA-MLP",
            "concat_padding_mask": True,
            "pos_emb_cls": "rope3d",
            "pos_emb_learnable": False,
            "pos_emb_interpolation": "crop",
            "block_x_format": "THWBD",
            "affline_emb_norm": True,
            "use_adaln_lora": True,
            "adaln_lora_dim": 256,
            "num_blocks": 28,
            "num_heads": 32,
            "extra_per_block_abs_pos_emb": True,
            "rope_h_extrapolation_ratio": 1.0,
            "rope_w_extrapolation_ratio": 1.0,
            "rope_t_extrapolation_ratio": 2.0,
            "extra_per_block_abs_pos_emb_type": "learnable",
        }
    ),
    prompt_lengths=(512, 512),  # the T5 tokenizer pads every prompt to 512 tokens
    # Seven of 28 blocks at the real width: 7B at 1024² (and 832x480 video) would take minutes.
    gpu_test_depth=7,
    #: Detection fixes 28 blocks for width 4096 (model_detection.py:505-507).
    depth_fixed_by_detection=True,
)
