"""Z-Image / Z-Image-Turbo: the synthetic-checkpoint recipe ``zimage`` (a tool). The adapter and warm-up facts it
reads are ``bcg_runtime/comfy/models/zimage.py``'s, which never imports this."""

from bcg_runtime.comfy.models.zimage import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``): ComfyUI's detection config and the family's facts.
RECIPE = FamilyInfo(
    name="zimage",
    adapter=ADAPTER,
    facts=FACTS,
    title="Z-Image / Z-Image-Turbo",
    ldm_class="comfy.ldm.lumina.model:NextDiT",
    supported_model="ZImage",
    model_base="Lumina2",
    latent_format="Flux",
    hidden_size=3840,
    num_heads=30,
    text_encoder="Qwen3-4B (hidden layer -2)",
    latent_dimensions=2,
    depth_keys=("n_layers",),
    real_depth=(30,),
    block_attrs=("layers",),
    default_steps=8,
    default_cfg=1.0,
    config=frozen_config(
        {
            "image_model": "lumina2",
            "patch_size": 2,
            "in_channels": 16,
            "dim": 3840,
            "cap_feat_dim": 2560,
            "n_layers": 30,
            "qk_norm": True,
            "n_heads": 30,
            "n_kv_heads": 30,
            "axes_dims": [32, 48, 48],
            "axes_lens": [1536, 512, 512],
            "rope_theta": 256.0,
            "ffn_dim_multiplier": 8.0 / 3.0,
            "z_image_modulation": True,
            "time_scale": 1000.0,
            "pad_tokens_multiple": 32,
        }
    ),
)
