"""HunyuanVideo 1.5 (8.3B): the synthetic-checkpoint recipe ``hunyuan_video15`` (a tool). The adapter and warm-up
facts it reads are ``bcg_runtime/comfy/models/hunyuan_video15.py``'s, which never imports this."""

from bcg_runtime.comfy.models.hunyuan_video15 import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like HunyuanVideo 1.5 (8.3B) 480p/720p
#: T2V and I2V: hidden 2048, 16 heads, 54 double blocks (no single block, so only ``depth`` counts),
#: 65 input channels (32 latent + 32 image + mask), Qwen2.5-VL-7B context, byT5 and SigLIP inputs.
RECIPE = FamilyInfo(
    name="hunyuan_video15",
    adapter=ADAPTER,
    facts=FACTS,
    title="HunyuanVideo 1.5 (8.3B)",
    ldm_class="comfy.ldm.hunyuan_video.model:HunyuanVideo",
    supported_model="HunyuanVideo15",
    model_base="HunyuanVideo15",
    latent_format="HunyuanVideo15",
    hidden_size=2048,
    num_heads=16,
    text_encoder="Qwen2.5-VL-7B (template tokens dropped), byT5-small for quoted text",
    latent_dimensions=3,
    depth_keys=("depth",),
    real_depth=(54,),
    block_attrs=("double_blocks",),
    default_steps=50,
    default_cfg=6.0,
    config=frozen_config(
        {
            "image_model": "hunyuan_video",
            "in_channels": 65,
            "patch_size": [1, 1, 1],
            "out_channels": 32,
            "vec_in_dim": None,
            "axes_dim": [16, 56, 56],
            "meanflow": False,
            "context_in_dim": 3584,
            "hidden_size": 2048,
            "mlp_ratio": 4.0,
            "num_heads": 16,
            "depth": 54,
            "depth_single_blocks": 0,
            "theta": 256,
            "qkv_bias": True,
            "byt5": True,
            "guidance_embed": False,
            "use_cond_type_embedding": True,
            "vision_in_dim": 1152,
            "meanflow_sum": True,
        }
    ),
    # A third of the depth at the real width: the generic image test samples 512² and 1024² and the
    # family's own test 848x480 at 33 frames (14k tokens); 54 blocks would cost minutes there.
    gpu_test_depth=18,
)
