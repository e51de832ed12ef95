"""JoyImage: the synthetic-checkpoint recipe ``joyimage`` (a tool). The adapter and warm-up facts it reads are
``bcg_runtime/comfy/models/joyimage.py``'s, which never imports this."""

from bcg_runtime.comfy.models.joyimage import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like JoyImage as ComfyUI 0.33.0
#: detects it (model_detection.py:1128-1144: width, heads, patch and block count from the
#: layout) at the class's defaults: 3072 wide, 24 heads of 128, 20 double blocks, 1x2x2 patches.
RECIPE = FamilyInfo(
    name="joyimage",
    adapter=ADAPTER,
    facts=FACTS,
    title="JoyImage",
    ldm_class="comfy.ldm.joyimage.model:JoyImageTransformer3DModel",
    supported_model="JoyImage",
    model_base="JoyImage",
    latent_format="Wan21",
    hidden_size=3072,
    num_heads=24,
    text_encoder="Qwen3-VL-8B (no padding)",
    latent_dimensions=3,
    depth_keys=("num_layers",),
    real_depth=(20,),
    block_attrs=("double_blocks",),
    default_steps=30,
    default_cfg=4.0,
    config=frozen_config(
        {
            "image_model": "joyimage",
            "in_channels": 16,
            "hidden_size": 3072,
            "patch_size": [1, 2, 2],
            "num_layers": 20,
            "num_attention_heads": 24,
            "text_dim": 4096,
        }
    ),
    # None: the real 20 blocks at 3072 wide sample 512² and 1024² quickly on the H200.
    gpu_test_depth=None,
)
