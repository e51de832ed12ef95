"""Lumina-Image 2.0: the synthetic-checkpoint recipe ``lumina2`` (a tool). The adapter and warm-up facts it reads
are ``bcg_runtime/comfy/models/lumina2.py``'s, which never imports this."""

from bcg_runtime.comfy.models.lumina2 import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``): Lumina-Image-2.0 as ComfyUI detects it.
RECIPE = FamilyInfo(
    name="lumina2",
    adapter=ADAPTER,
    facts=FACTS,
    title="Lumina-Image 2.0",
    ldm_class="comfy.ldm.lumina.model:NextDiT",
    supported_model="Lumina2",
    model_base="Lumina2",
    latent_format="Flux",
    hidden_size=2304,
    num_heads=24,
    text_encoder="Gemma-2-2B (hidden layer -2)",
    latent_dimensions=2,
    depth_keys=("n_layers",),
    real_depth=(26,),
    block_attrs=("layers",),
    default_steps=25,
    default_cfg=4.0,
    config=frozen_config(
        {
            "image_model": "lumina2",
            "patch_size": 2,
            "in_channels": 16,
            "dim": 2304,
            "cap_feat_dim": 2304,
            "n_layers": 26,
            "qk_norm": True,
            "n_heads": 24,
            "n_kv_heads": 8,
            "axes_dims": [32, 32, 32],
            "axes_lens": [300, 512, 512],
            "rope_theta": 10000.0,
            "ffn_dim_multiplier": 4.0,
        }
    ),
    #: 2.6B parameters (26 layers + 4 refiner blocks at 2304): the whole model samples 512² and
    #: 1024² in seconds on the H200, so the GPU test runs it at its real depth.
    gpu_test_depth=None,
)
