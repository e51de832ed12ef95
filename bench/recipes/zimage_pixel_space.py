"""Z-Image pixel space: the synthetic-checkpoint recipe ``zimage_pixel_space`` (a tool). The adapter and warm-up
facts it reads are ``bcg_runtime/comfy/models/zimage_pixel_space.py``'s, which never imports this."""

from bcg_runtime.comfy.models.zimage_pixel_space import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config
from .zimage import RECIPE as ZIMAGE

#: The synthetic-checkpoint recipe (``..synthetic``): Z-Image's backbone with the pixel decoder, as
#: ComfyUI 0.33.0 detects it (``model_detection.py:617``: patch from ``x_embedder``, 3 channels).
RECIPE = FamilyInfo(
    name="zimage_pixel_space",
    adapter=ADAPTER,
    facts=FACTS,
    title="Z-Image pixel space",
    ldm_class="comfy.ldm.lumina.model:NextDiTPixelSpace",
    supported_model="ZImagePixelSpace",
    model_base="ZImagePixelSpace",
    latent_format="ZImagePixelSpace",
    hidden_size=ZIMAGE.hidden_size,
    num_heads=ZIMAGE.num_heads,
    text_encoder=ZIMAGE.text_encoder,
    latent_dimensions=2,
    depth_keys=("n_layers",),
    real_depth=(30,),
    block_attrs=("layers",),
    default_steps=30,
    default_cfg=4.0,
    config=frozen_config(
        {
            **ZIMAGE.config,
            "image_model": "zimage_pixel",
            "patch_size": 16,
            "in_channels": 3,
            "decoder_in_channels": 16 * 16 * 3,
            "decoder_hidden_size": 3840,
            "decoder_num_res_blocks": 4,
            "decoder_max_freqs": 8,
        }
    ),
    #: Z-Image's 6B backbone (its GPU test runs at full depth) plus a ~0.3B decoder; 1024² is 4096
    #: tokens as Z-Image's, so the whole model samples in seconds on the H200.
    gpu_test_depth=None,
)
