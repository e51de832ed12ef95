"""OmniGen2: the synthetic-checkpoint recipe ``omnigen2`` (a tool). The adapter and warm-up facts it reads are
``bcg_runtime/comfy/models/omnigen2.py``'s, which never imports this."""

from bcg_runtime.comfy.models.omnigen2 import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``): OmniGen2 as ComfyUI detects it (every size
#: fixed by detection: hidden 2520, 21/7 heads, 32 layers, 2 refiner blocks each, text 2048).
RECIPE = FamilyInfo(
    name="omnigen2",
    adapter=ADAPTER,
    facts=FACTS,
    title="OmniGen2",
    ldm_class="comfy.ldm.omnigen.omnigen2:OmniGen2Transformer2DModel",
    supported_model="Omnigen2",
    model_base="Omnigen2",
    latent_format="Flux",
    hidden_size=2520,
    num_heads=21,
    text_encoder="Qwen2.5-VL-3B (unpadded)",
    latent_dimensions=2,
    depth_keys=("num_layers", "num_refiner_layers"),
    real_depth=(32, 2),
    block_attrs=("layers", "noise_refiner"),
    default_steps=50,
    default_cfg=5.0,
    config=frozen_config(
        {
            "image_model": "omnigen2",
            "axes_dim_rope": [40, 40, 40],
            "axes_lens": [1024, 1664, 1664],
            "ffn_dim_multiplier": None,
            "hidden_size": 2520,
            "in_channels": 16,
            "multiple_of": 256,
            "norm_eps": 1e-05,
            "num_attention_heads": 21,
            "num_kv_heads": 7,
            "num_layers": 32,
            "num_refiner_layers": 2,
            "out_channels": None,
            "patch_size": 2,
            "text_feat_dim": 2048,
            "timestep_scale": 1000.0,
        }
    ),
    #: About 4B parameters: the whole model samples 512² and 1024² on the H200.
    gpu_test_depth=None,
    depth_fixed_by_detection=True,
)
