"""Lens: the synthetic-checkpoint recipe ``lens`` (a tool). The adapter and warm-up facts it reads are
``bcg_runtime/comfy/models/lens.py``'s, which never imports this."""

from bcg_runtime.comfy.models.lens import ADAPTER, ENCODER_WIDTH, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like Lens as ComfyUI 0.33.0 detects it
#: (model_detection.py:920-942): 48 blocks, 24 heads of 64, 128 latent channels in and 32 out
#: (2x2 unpatched), 4 stacked GPT-OSS layers of 2880.
RECIPE = FamilyInfo(
    name="lens",
    adapter=ADAPTER,
    facts=FACTS,
    title="Lens",
    ldm_class="comfy.ldm.lens.model:LensTransformer2DModel",
    supported_model="Lens",
    model_base="Lens",
    latent_format="Flux2",
    hidden_size=1536,
    num_heads=24,
    text_encoder="GPT-OSS-20B, 4 hidden layers side by side (no padding)",
    latent_dimensions=2,
    depth_keys=("num_layers",),
    real_depth=(48,),
    block_attrs=("transformer_blocks",),
    default_steps=30,
    default_cfg=4.0,
    config=frozen_config(
        {
            "image_model": "lens",
            "in_channels": 128,
            "out_channels": 32,
            "num_layers": 48,
            "num_attention_heads": 24,
            "enc_hidden_dim": ENCODER_WIDTH,
            "multi_layer_encoder_feature": True,
            "selected_layer_index": [0, 1, 2, 3],
        }
    ),
    # None: the real 48 blocks at 1536 wide sample 512² and 1024² quickly on the H200.
    gpu_test_depth=None,
)
