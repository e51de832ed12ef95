"""HunyuanImage 2.1 Refiner: the synthetic-checkpoint recipe ``hunyuan_image21_refiner`` (a tool). The adapter and
warm-up facts it reads are ``bcg_runtime/comfy/models/hunyuan_image21_refiner.py``'s, which never imports this."""

import dataclasses

from bcg_runtime.comfy.models.hunyuan_image21_refiner import ADAPTER, FACTS

from ..recipe import frozen_config
from . import hunyuan_image21

#: HunyuanImage-2.1 refiner: in 128 (latent 64 + image 64), out 64, hidden 3328, 26 heads, 20
#: double and 40 single blocks, guidance embedding and ``time_r_in``, no byT5 mapper.
RECIPE = dataclasses.replace(
    hunyuan_image21.RECIPE,
    adapter=ADAPTER,
    facts=FACTS,
    name="hunyuan_image21_refiner",
    title="HunyuanImage 2.1 Refiner",
    supported_model="HunyuanImage21Refiner",
    model_base="HunyuanImage21Refiner",
    latent_format="HunyuanImage21Refiner",
    hidden_size=3328,
    num_heads=26,
    latent_dimensions=3,
    sampled_channels=32,  # process_out unpacks the 64 model channels into two frames of the VAE's 32
    text_encoder="Qwen2.5-VL-7B (template tokens dropped)",
    default_steps=4,
    default_cfg=1.0,
    config=frozen_config(
        {
            **hunyuan_image21.RECIPE.config,
            "in_channels": 128,
            "patch_size": [1, 1, 1],
            "out_channels": 64,
            "axes_dim": [16, 56, 56],
            "meanflow": True,
            "hidden_size": 3328,
            "num_heads": 26,
            "byt5": False,
            "guidance_embed": True,
        }
    ),
    # Half the depth at the real width: beside the base model's 17B in the same suite.
    gpu_test_depth=(10, 20),
)
