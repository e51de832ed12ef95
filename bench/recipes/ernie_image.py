"""ERNIE-Image: the synthetic-checkpoint recipe ``ernie_image`` (a tool). The adapter and warm-up facts it reads
are ``bcg_runtime/comfy/models/ernie_image.py``'s, which never imports this."""

from bcg_runtime.comfy.models.ernie_image import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``): ERNIE-Image as ComfyUI 0.33.0 builds it (the
#: class defaults: hidden 4096, 32 heads, 36 layers, feed-forward 12288, 128 latent channels,
#: Ministral-3-3B context 3072). CLIPTextEncode also returns an all-ones ``attention_mask``, which
#: ``model_base.ErnieImage`` drops; the conditioning here leaves it out (the DiT gets the same).
RECIPE = FamilyInfo(
    name="ernie_image",
    adapter=ADAPTER,
    facts=FACTS,
    title="ERNIE-Image",
    ldm_class="comfy.ldm.ernie.model:ErnieImageModel",
    supported_model="ErnieImage",
    model_base="ErnieImage",
    latent_format="Flux2",
    hidden_size=4096,
    num_heads=32,
    text_encoder="Ministral-3-3B (hidden layer -2), unpadded",
    latent_dimensions=2,
    depth_keys=("num_layers",),
    real_depth=(36,),
    block_attrs=("layers",),
    default_steps=30,
    default_cfg=4.0,
    config=frozen_config({"image_model": "ernie"}),
    #: About 8B parameters (16 GB in bf16): the whole model samples 512² and 1024² on the H200.
    gpu_test_depth=None,
    depth_fixed_by_detection=True,
)
