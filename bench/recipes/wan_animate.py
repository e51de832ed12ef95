"""Wan 2.2 Animate 14B: the synthetic-checkpoint recipe ``wan_animate`` (a tool). The adapter and warm-up facts it
reads are ``bcg_runtime/comfy/models/wan_animate.py``'s, which never imports this."""

from bcg_runtime.comfy.models.wan_animate import ADAPTER

from .wan import variant_recipe

#: Wan 2.2 Animate 14B: the I2V layout (``in_dim`` 36, CLIP image embedding), the pose embedding,
#: motion and face encoders and 8 face-adapter blocks (40 // 5).
RECIPE = variant_recipe(
    ADAPTER,
    "wan_animate",
    "Wan 2.2 Animate 14B",
    "WAN22_Animate",
    "WAN22_Animate",
    {"model_type": "animate", "in_dim": 36},
    ldm_class="comfy.ldm.wan.model_animate:AnimateWanModel",
    smallest_depth=5,
    # Wan's 10 blocks at the real width: two face-adapter blocks, within the suite's time.
    gpu_test_depth=10,
)
