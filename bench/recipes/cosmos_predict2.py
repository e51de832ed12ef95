"""Cosmos-Predict2 2B Text2Image: the synthetic-checkpoint recipe ``cosmos_predict2`` (a tool). The adapter and
warm-up facts it reads are ``bcg_runtime/comfy/models/cosmos_predict2.py``'s, which never imports this."""

from bcg_runtime.comfy.models.cosmos_predict2 import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like Cosmos-Predict2 2B text-to-image:
#: 2048 wide, 16 heads, 28 blocks, T5-XXL context (1024).
RECIPE = FamilyInfo(
    name="cosmos_predict2",
    adapter=ADAPTER,
    facts=FACTS,
    title="Cosmos-Predict2 2B Text2Image",
    ldm_class="comfy.ldm.cosmos.predict2:MiniTrainDIT",
    supported_model="CosmosT2IPredict2",
    model_base="CosmosPredict2",
    latent_format="Wan21",
    hidden_size=2048,
    num_heads=16,
    text_encoder="T5-XXL (old), padded to 512 tokens",
    latent_dimensions=3,
    depth_keys=("num_blocks",),
    real_depth=(28,),
    block_attrs=("blocks",),
    default_steps=35,
    default_cfg=4.0,
    config=frozen_config(
        {
            "image_model": "cosmos_predict2",
            "max_img_h": 240,
            "max_img_w": 240,
            "max_frames": 128,
            "in_channels": 16,
            "out_channels": 16,
            "patch_spatial": 2,
            "patch_temporal": 1,
            "model_channels": 2048,
            "concat_padding_mask": True,
            "crossattn_emb_channels": 1024,
            "pos_emb_cls": "rope3d",
            "pos_emb_learnable": True,
            "pos_emb_interpolation": "crop",
            "min_fps": 1,
            "max_fps": 30,
            "use_adaln_lora": True,
            "adaln_lora_dim": 256,
            "num_blocks": 28,
            "num_heads": 16,
            "extra_per_block_abs_pos_emb": False,
            "rope_h_extrapolation_ratio": 4.0,
            "rope_w_extrapolation_ratio": 4.0,
            "rope_t_extrapolation_ratio": 1.0,
            "extra_h_extrapolation_ratio": 1.0,
            "extra_w_extrapolation_ratio": 1.0,
            "extra_t_extrapolation_ratio": 1.0,
            "rope_enable_fps_modulation": False,
        }
    ),
    prompt_lengths=(512, 512),  # the T5 tokenizer pads every prompt to 512 tokens
    #: 2B parameters: the whole model samples 512² and 1024² on the H200 in seconds.
    gpu_test_depth=None,
    #: ComfyUI 0.8.0's detection fixes 28 blocks for width 2048 (0.33.0 counts them, where setting
    #: the count at load changes nothing).
    depth_fixed_by_detection=True,
)
