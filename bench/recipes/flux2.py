"""FLUX.2 [klein] 4B: the synthetic-checkpoint recipe ``flux2`` (a tool). The adapter and warm-up facts it reads
are ``bcg_runtime/comfy/models/flux2.py``'s, which never imports this."""

from bcg_runtime.comfy.models.flux2 import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like FLUX.2 [klein] 4B: hidden 3072,
#: 24 heads, 5 double and 20 single blocks, Qwen3-4B context (3 layers x 2560 = 7680), no guidance
#: embedding (the distilled klein runs at cfg 1 in 4 steps).
RECIPE = FamilyInfo(
    name="flux2",
    adapter=ADAPTER,
    facts=FACTS,
    title="FLUX.2 [klein] 4B",
    ldm_class="comfy.ldm.flux.model:Flux",
    supported_model="Flux2",
    model_base="Flux2",
    latent_format="Flux2",
    hidden_size=3072,
    num_heads=24,
    text_encoder="Qwen3-4B (3 hidden layers concatenated), padded to 512 tokens",
    latent_dimensions=2,
    depth_keys=("depth", "depth_single_blocks"),
    real_depth=(5, 20),
    block_attrs=("double_blocks", "single_blocks"),
    default_steps=4,
    default_cfg=1.0,
    config=frozen_config(
        {
            "image_model": "flux2",
            "axes_dim": [32, 32, 32, 32],
            "num_heads": 24,
            "mlp_ratio": 3.0,
            "theta": 2000,
            "out_channels": 128,
            "global_modulation": True,
            "mlp_silu_act": True,
            "qkv_bias": False,
            "ops_bias": False,
            "default_ref_method": "index",
            "ref_index_scale": 10.0,
            "txt_ids_dims": [3],
            "in_channels": 128,
            "hidden_size": 3072,
            "context_in_dim": 7680,
            "patch_size": 1,
            "vec_in_dim": None,
            "depth": 5,
            "depth_single_blocks": 20,
            "guidance_embed": False,
            "yak_mlp": False,
            "txt_norm": False,
        }
    ),
    prompt_lengths=(300, 77),  # both arrive padded to 512
)
