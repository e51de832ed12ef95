"""Qwen-Image and Qwen-Image-2512 (``comfy.ldm.qwen_image.model.QwenImageTransformer2DModel``).

The text context arrives at its exact token count with no mask (ComfyUI 0.8.0 drops an all-ones
mask), and text RoPE positions start after the image grid, so padding would add unmasked tokens:
each exact length is its own graph. Cond and uncond of different lengths run as two batch-1 calls,
each replaying its own graph.
"""

from .base import ModelAdapter
from .recipe import FamilyInfo, frozen_config

ADAPTER = ModelAdapter(
    family="qwen_image",
    display_name="Qwen-Image",
    config_classes=("QwenImage",),
    max_text_length=1024,
    text_policy="exact length: unmasked text attention, each prompt length is its own graph",
    padded_text_rows_exact=False,
)

#: The synthetic-checkpoint recipe (``..synthetic``): ComfyUI's detection config and the family's facts.
RECIPE = FamilyInfo(
    name="qwen_image",
    title="Qwen-Image (20B)",
    ldm_class="comfy.ldm.qwen_image.model:QwenImageTransformer2DModel",
    supported_model="QwenImage",
    model_base="QwenImage",
    latent_format="Wan21",
    hidden_size=3072,
    num_heads=24,
    text_dim=3584,
    text_encoder="Qwen2.5-VL-7B (last layer, template tokens dropped)",
    pooled_dim=None,
    latent_channels=16,
    latent_dimensions=3,
    depth_keys=("num_layers",),
    real_depth=(60,),
    block_attrs=("transformer_blocks",),
    default_steps=20,
    default_cfg=2.5,
    default_cond_length=64,
    default_guidance=None,
    config=frozen_config({"image_model": "qwen_image", "in_channels": 64, "num_layers": 60}),
)
