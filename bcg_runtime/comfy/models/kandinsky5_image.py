"""Kandinsky 5.0 Image Lite (``supported_models.Kandinsky5Image``): the Kandinsky 5 DiT (read in
``kandinsky5.py``, whose adapter class serves it) with the FLUX.1 latent ``[B,16,H,W]`` at 8x, no
concat channels and no frames. Its own module so that it has its own recipe (``bench/recipes/kandinsky5_image.py``) and GPU test: the
6B Image Lite checkpoint differs from Video Lite in every width.
"""

from .base import WarmupFacts
from .kandinsky5 import Kandinsky5Adapter, pooled_clip_l

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
