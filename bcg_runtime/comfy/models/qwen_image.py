"""Qwen-Image and Qwen-Image-2512 (``comfy.ldm.qwen_image.model.QwenImageTransformer2DModel``).

The text context arrives at its exact token count with no mask (ComfyUI 0.8.0 drops an all-ones
mask), and text RoPE positions start after the image grid, so padding would add unmasked tokens:
each exact length is its own graph. Cond and uncond of different lengths run as two batch-1 calls,
each replaying its own graph.
"""

from .base import ModelAdapter

ADAPTER = ModelAdapter(
    family="qwen_image",
    display_name="Qwen-Image",
    config_classes=("QwenImage",),
    max_text_length=1024,
    text_policy="exact length: unmasked text attention, each prompt length is its own graph",
    padded_text_rows_exact=False,
)
