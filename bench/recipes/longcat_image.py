"""LongCat-Image (6B): the synthetic-checkpoint recipe ``longcat_image`` (a tool). The adapter and warm-up facts it
reads are ``bcg_runtime/comfy/models/longcat_image.py``'s, which never imports this."""

from bcg_runtime.comfy.models.longcat_image import ADAPTER, CONTEXT_LENGTH, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like LongCat-Image (6B) as ComfyUI
#: 0.33.0 detects it (``model_detection.py:354``: context 3584 and no ``vector_in``).
RECIPE = FamilyInfo(
    name="longcat_image",
    adapter=ADAPTER,
    facts=FACTS,
    title="LongCat-Image (6B)",
    ldm_class="comfy.ldm.flux.model:Flux",
    supported_model="LongCatImage",
    model_base="LongCatImage",
    latent_format="Flux",
    hidden_size=3072,
    num_heads=24,
    text_encoder="Qwen2.5-VL-7B (prompt padded to 512 tokens, template stripped)",
    latent_dimensions=2,
    depth_keys=("depth", "depth_single_blocks"),
    real_depth=(10, 20),
    block_attrs=("double_blocks", "single_blocks"),
    default_steps=50,
    default_cfg=4.5,
    config=frozen_config(
        {
            "image_model": "flux",
            "axes_dim": [16, 56, 56],
            "num_heads": 24,
            "mlp_ratio": 4.0,
            "theta": 10000,
            "out_channels": 16,
            "qkv_bias": True,
            "txt_ids_dims": [1, 2],
            "in_channels": 16,
            "hidden_size": 3072,
            "context_in_dim": 3584,
            "patch_size": 2,
            "vec_in_dim": None,
            "depth": 10,
            "depth_single_blocks": 20,
            "guidance_embed": False,
            "yak_mlp": False,
            "txt_norm": False,
        }
    ),
    prompt_lengths=(CONTEXT_LENGTH, CONTEXT_LENGTH),
    #: 6B parameters, half FLUX.1-dev's 12B that the suite samples whole: the real depth samples
    #: 512² and 1024² quickly on the H200.
    gpu_test_depth=None,
)
