"""Kandinsky 5.0 Image Lite: the synthetic-checkpoint recipe ``kandinsky5_image`` (a tool). The adapter and warm-up
facts it reads are ``bcg_runtime/comfy/models/kandinsky5_image.py``'s, which never imports this."""

from bcg_runtime.comfy.models.kandinsky5_image import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like Kandinsky 5.0 Image Lite (6B):
#: model 2560 (20 heads of 128), feed-forward 10240, time 512, 2 text and 50 visual blocks, visual
#: input 16 x 2x2 patch = 64, RoPE scale 1 on every axis (detection sets it for model_dim 2560).
RECIPE = FamilyInfo(
    name="kandinsky5_image",
    adapter=ADAPTER,
    facts=FACTS,
    title="Kandinsky 5.0 Image Lite",
    ldm_class="comfy.ldm.kandinsky5.model:Kandinsky5",
    supported_model="Kandinsky5Image",
    model_base="Kandinsky5Image",
    latent_format="Flux",
    hidden_size=2560,
    num_heads=20,
    text_encoder="Qwen2.5-VL-7B (template tokens dropped) + CLIP-L pooled",
    latent_dimensions=2,
    depth_keys=("num_text_blocks", "num_visual_blocks"),
    real_depth=(2, 50),
    block_attrs=("text_transformer_blocks", "visual_transformer_blocks"),
    default_steps=50,
    default_cfg=3.5,
    config=frozen_config(
        {
            "model_dim": 2560,
            "axes_dims": [32, 48, 48],
            "rope_scale_factor": [1.0, 1.0, 1.0],
            "time_dim": 512,
            "image_model": "kandinsky5",
            "ff_dim": 10240,
            "visual_embed_dim": 64,
            "num_text_blocks": 2,
            "num_visual_blocks": 50,
        }
    ),
    #: 6B parameters (12 GB in bf16): the whole model samples 512² and 1024² on the H200.
    gpu_test_depth=None,
)
