"""Qwen-Image (20B): the synthetic-checkpoint recipe ``qwen_image`` (a tool). The adapter and warm-up facts it
reads are ``bcg_runtime/comfy/models/qwen_image.py``'s, which never imports this."""

from bcg_runtime.comfy.models.qwen_image import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``): ComfyUI's detection config and the family's facts.
RECIPE = FamilyInfo(
    name="qwen_image",
    adapter=ADAPTER,
    facts=FACTS,
    title="Qwen-Image (20B), Qwen-Image-2512, Qwen-Image-Edit 2509 / 2511",
    ldm_class="comfy.ldm.qwen_image.model:QwenImageTransformer2DModel",
    supported_model="QwenImage",
    model_base="QwenImage",
    latent_format="Wan21",
    hidden_size=3072,
    num_heads=24,
    text_encoder="Qwen2.5-VL-7B (last layer, template tokens dropped)",
    latent_dimensions=3,
    depth_keys=("num_layers",),
    real_depth=(60,),
    block_attrs=("transformer_blocks",),
    default_steps=20,
    default_cfg=2.5,
    config=frozen_config({"image_model": "qwen_image", "in_channels": 64, "num_layers": 60}),
)
