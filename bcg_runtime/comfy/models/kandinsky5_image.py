"""Kandinsky 5.0 Image Lite (``supported_models.Kandinsky5Image``): the Kandinsky 5 DiT (read in
``kandinsky5.py``, whose adapter class serves it) with the FLUX.1 latent ``[B,16,H,W]`` at 8x, no
concat channels and no frames. Its own module so that it has its own recipe (and GPU test): the
6B Image Lite checkpoint differs from Video Lite in every width.
"""

from .base import WarmupFacts
from .kandinsky5 import Kandinsky5Adapter, pooled_clip_l
from .recipe import FamilyInfo, frozen_config

ADAPTER = Kandinsky5Adapter(
    family="kandinsky5_image",
    display_name="Kandinsky 5 Image",
    config_classes=("Kandinsky5Image",),
    max_text_length=1024,
    text_policy="exact length: Qwen2.5-VL context unpadded and unmasked, each prompt length is its own graph",
    image=True,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=3584,
    pooled_dim=768,
    default_cond_length=64,
    latent_channels=16,
    conditioning_extras=pooled_clip_l,
)


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
