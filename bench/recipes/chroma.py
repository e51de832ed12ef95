"""Chroma1-HD: the synthetic-checkpoint recipe ``chroma`` (a tool). The adapter and warm-up facts it reads are
``bcg_runtime/comfy/models/chroma.py``'s, which never imports this."""

from bcg_runtime.comfy.models.chroma import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

T5_ENCODER = "T5-XXL (PixArt tokenizer: no padding, no attention mask)"


#: ``model_detection`` fills these for every Chroma (0.8.0 and 0.33.0): the approximator's widths
#: are fixed there, not read from the weights.
APPROXIMATOR = {"in_dim": 64, "out_dim": 3072, "hidden_dim": 5120, "n_layers": 5}


#: The synthetic-checkpoint recipe (``..synthetic``), Chroma1-HD: FLUX.1's DiT at full depth with the
#: approximator, 64 input channels (16 latent channels x 2x2 patch).
RECIPE = FamilyInfo(
    name="chroma",
    adapter=ADAPTER,
    facts=FACTS,
    title="Chroma1-HD",
    ldm_class="comfy.ldm.chroma.model:Chroma",
    supported_model="Chroma",
    model_base="Chroma",
    latent_format="Flux",
    hidden_size=3072,
    num_heads=24,
    text_encoder=T5_ENCODER,
    latent_dimensions=2,
    depth_keys=("depth", "depth_single_blocks"),
    real_depth=(19, 38),
    block_attrs=("double_blocks", "single_blocks"),
    default_steps=26,
    default_cfg=4.0,
    config=frozen_config(
        {
            "image_model": "chroma",
            "axes_dim": [16, 56, 56],
            "num_heads": 24,
            "mlp_ratio": 4.0,
            "theta": 10000,
            "out_channels": 64,
            "qkv_bias": True,
            "txt_ids_dims": [],
            "in_channels": 64,
            "hidden_size": 3072,
            "context_in_dim": 4096,
            "patch_size": 2,
            "vec_in_dim": None,
            "depth": 19,
            "depth_single_blocks": 38,
            **APPROXIMATOR,
        }
    ),
    # Full width, fewer blocks: two of each kind chain the double->single hand-off and the
    # approximator's per-block offsets at the real sizes, and sample 512² and 1024² quickly.
    gpu_test_depth=(2, 4),
)
