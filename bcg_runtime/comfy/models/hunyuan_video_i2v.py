"""HunyuanVideo 1.0 image-to-video (``HunyuanVideoI2V``): the ``hunyuan_video`` adapter (same
class, same forward; ``hunyuan_video.py`` names how each I2V input reaches the key) with a recipe
of the I2V checkpoint's layout (``bench/recipes/hunyuan_video_i2v.py``): ``img_in`` over 33 channels (latent 16, start image 16, inverted
mask 1; 0.33.0 comfy/supported_models.py:1038-1046)."""

from . import hunyuan_video

ADAPTER = hunyuan_video.ADAPTER

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = hunyuan_video.FACTS
