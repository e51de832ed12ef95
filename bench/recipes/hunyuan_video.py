"""HunyuanVideo 1.0 T2V (13B): the synthetic-checkpoint recipe ``hunyuan_video`` (a tool). The adapter and warm-up
facts it reads are ``bcg_runtime/comfy/models/hunyuan_video.py``'s, which never imports this."""

from bcg_runtime.comfy.models.hunyuan_video import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like HunyuanVideo 1.0 T2V (13B,
#: ``hunyuan_video_720_cfgdistill``): hidden 3072, 24 heads, 20 double and 40 single blocks.
RECIPE = FamilyInfo(
    name="hunyuan_video",
    adapter=ADAPTER,
    facts=FACTS,
    title="HunyuanVideo 1.0 T2V (13B)",
    ldm_class="comfy.ldm.hunyuan_video.model:HunyuanVideo",
    supported_model="HunyuanVideo",
    model_base="HunyuanVideo",
    latent_format="HunyuanVideo",
    hidden_size=3072,
    num_heads=24,
    text_encoder="LLaVA-LLaMA-3-8B (template cropped, unpadded) + CLIP-L (pooled)",
    latent_dimensions=3,
    depth_keys=("depth", "depth_single_blocks"),
    real_depth=(20, 40),
    block_attrs=("double_blocks", "single_blocks"),
    default_steps=30,
    default_cfg=1.0,
    config=frozen_config(
        {
            "image_model": "hunyuan_video",
            "in_channels": 16,
            "patch_size": [1, 2, 2],
            "out_channels": 16,
            "vec_in_dim": 768,
            "axes_dim": [16, 56, 56],
            "meanflow": False,
            "context_in_dim": 4096,
            "hidden_size": 3072,
            "mlp_ratio": 4.0,
            "num_heads": 24,
            "depth": 20,
            "depth_single_blocks": 40,
            "theta": 256,
            "qkv_bias": True,
            "byt5": False,
            "guidance_embed": True,
            "use_cond_type_embedding": False,
            "vision_in_dim": None,
            "meanflow_sum": False,
        }
    ),
    # The real width at a quarter of the depth: 848x480 at 33 frames is 14k tokens, where 60 blocks
    # of 3072 would take minutes of the suite's time.
    gpu_test_depth=(5, 10),
)
