"""Mage-Flow: the synthetic-checkpoint recipe ``mage_flow`` (a tool). The adapter and warm-up facts it reads are
``bcg_runtime/comfy/models/mage_flow.py``'s, which never imports this."""

from bcg_runtime.comfy.models.mage_flow import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like Mage-Flow as ComfyUI 0.33.0
#: detects it (model_detection.py:944-949: 2560-wide ``txt_norm``, 128-wide ``proj_out``): 12
#: blocks, the class's default 24 heads of 128.
RECIPE = FamilyInfo(
    name="mage_flow",
    adapter=ADAPTER,
    facts=FACTS,
    title="Mage-Flow",
    ldm_class="comfy.ldm.mage_flow.model:MageFlowTransformer2DModel",
    supported_model="MageFlow",
    model_base="MageFlow",
    latent_format="Flux2",
    hidden_size=3072,
    num_heads=24,
    text_encoder="Qwen3-VL-4B (no padding)",
    latent_dimensions=2,
    depth_keys=("num_layers",),
    real_depth=(12,),
    block_attrs=("transformer_blocks",),
    default_steps=30,
    default_cfg=4.0,
    config=frozen_config({"image_model": "mage_flow", "in_channels": 128, "num_layers": 12}),
    # None: the real 12 blocks at 3072 wide sample 512² and 1024² quickly on the H200.
    gpu_test_depth=None,
)
