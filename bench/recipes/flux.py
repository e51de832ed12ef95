"""FLUX.1-dev: the synthetic-checkpoint recipe ``flux`` (a tool). The adapter and warm-up facts it reads are
``bcg_runtime/comfy/models/flux.py``'s, which never imports this."""

from bcg_runtime.comfy.models.flux import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``): ComfyUI's detection config and the family's facts.
RECIPE = FamilyInfo(
    name="flux",
    adapter=ADAPTER,
    facts=FACTS,
    title="FLUX.1-dev",
    ldm_class="comfy.ldm.flux.model:Flux",
    supported_model="Flux",
    model_base="Flux",
    latent_format="Flux",
    hidden_size=3072,
    num_heads=24,
    text_encoder="T5-XXL (context) + CLIP-L (pooled)",
    latent_dimensions=2,
    depth_keys=("depth", "depth_single_blocks"),
    real_depth=(19, 38),
    block_attrs=("double_blocks", "single_blocks"),
    default_steps=20,
    default_cfg=1.0,
    config=frozen_config(
        {
            "image_model": "flux",
            "axes_dim": [16, 56, 56],
            "num_heads": 24,
            "mlp_ratio": 4.0,
            "theta": 10000,
            "out_channels": 16,
            "qkv_bias": True,
            "txt_ids_dims": [],
            "in_channels": 16,
            "hidden_size": 3072,
            "context_in_dim": 4096,
            "patch_size": 2,
            "vec_in_dim": 768,
            "depth": 19,
            "depth_single_blocks": 38,
            "guidance_embed": True,
            "yak_mlp": False,
            "txt_norm": False,
        }
    ),
    prompt_lengths=(256, 256),  # T5 pads every prompt to 256 tokens
)
