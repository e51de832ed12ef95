"""Kandinsky 5.0 Video Lite: the synthetic-checkpoint recipe ``kandinsky5`` (a tool). The adapter and warm-up facts
it reads are ``bcg_runtime/comfy/models/kandinsky5.py``'s, which never imports this."""

from bcg_runtime.comfy.models.kandinsky5 import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like Kandinsky 5.0 Video Lite (2B, T2V
#: and I2V): model 1792 (28 heads of 64), feed-forward 7168, time 512, 2 text and 32 visual blocks,
#: visual input (16 latent + 16 image + 1 mask) x 2x2 patch = 132.
RECIPE = FamilyInfo(
    name="kandinsky5",
    adapter=ADAPTER,
    facts=FACTS,
    title="Kandinsky 5.0 Video Lite",
    ldm_class="comfy.ldm.kandinsky5.model:Kandinsky5",
    supported_model="Kandinsky5",
    model_base="Kandinsky5",
    latent_format="HunyuanVideo",
    hidden_size=1792,
    num_heads=28,
    text_encoder="Qwen2.5-VL-7B (template tokens dropped) + CLIP-L pooled",
    latent_dimensions=3,
    depth_keys=("num_text_blocks", "num_visual_blocks"),
    real_depth=(2, 32),
    block_attrs=("text_transformer_blocks", "visual_transformer_blocks"),
    default_steps=50,
    default_cfg=5.0,
    config=frozen_config(
        {
            "model_dim": 1792,
            "axes_dims": [16, 24, 24],
            "time_dim": 512,
            "image_model": "kandinsky5",
            "ff_dim": 7168,
            "visual_embed_dim": 132,
            "num_text_blocks": 2,
            "num_visual_blocks": 32,
        }
    ),
    #: 2B parameters: the whole model samples on the H200 in seconds.
    gpu_test_depth=None,
)
