"""SkyReels V1 image-to-video on HunyuanVideo 1.0 (``HunyuanVideoSkyreelsI2V``): the
``hunyuan_video`` adapter (same class, same forward) with a recipe of its layout (``bench/recipes/hunyuan_video_skyreels_i2v.py``): ``img_in`` over
32 channels (latent 16 and the start image's latent 16, no mask; 0.33.0
comfy/supported_models.py:1048-1056, ``concat_keys`` ``("concat_image",)`` at
comfy/model_base.py:1404-1410)."""

from . import hunyuan_video

ADAPTER = hunyuan_video.ADAPTER

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = hunyuan_video.FACTS
