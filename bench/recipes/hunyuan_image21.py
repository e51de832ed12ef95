"""HunyuanImage 2.1 (17B): the synthetic-checkpoint recipe ``hunyuan_image21`` (a tool). The adapter and warm-up
facts it reads are ``bcg_runtime/comfy/models/hunyuan_image21.py``'s, which never imports this."""

from bcg_runtime.comfy.models.hunyuan_image21 import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like HunyuanImage-2.1 (base, 17B).
RECIPE = FamilyInfo(
    name="hunyuan_image21",
    adapter=ADAPTER,
    facts=FACTS,
    title="HunyuanImage 2.1 (17B)",
    ldm_class="comfy.ldm.hunyuan_video.model:HunyuanVideo",
    supported_model="HunyuanImage21",
    model_base="HunyuanImage21",
    latent_format="HunyuanImage21",
    hidden_size=3584,
    num_heads=28,
    text_encoder="Qwen2.5-VL-7B (template tokens dropped), byT5-small for quoted text",
    latent_dimensions=2,
    depth_keys=("depth", "depth_single_blocks"),
    real_depth=(20, 40),
    block_attrs=("double_blocks", "single_blocks"),
    default_steps=50,
    default_cfg=3.5,
    config=frozen_config(
        {
            "image_model": "hunyuan_video",
            "in_channels": 64,
            "patch_size": [1, 1],
            "out_channels": 64,
            "vec_in_dim": None,
            "axes_dim": [64, 64],
            "meanflow": False,
            "context_in_dim": 3584,
            "hidden_size": 3584,
            "mlp_ratio": 4.0,
            "num_heads": 28,
            "depth": 20,
            "depth_single_blocks": 40,
            "theta": 256,
            "qkv_bias": True,
            "byt5": True,
            "guidance_embed": False,
            "use_cond_type_embedding": False,
            "vision_in_dim": None,
            "meanflow_sum": False,
        }
    ),
    # The real depth: 17B parameters (34 GB in bf16) fit the H200 beside the graphs, and the 32x
    # VAE makes 1024² only 1024 image tokens (4096 at 2048²), so 512² and 1024² sample quickly.
    gpu_test_depth=None,
)
