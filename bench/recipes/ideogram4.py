"""Ideogram 4: the synthetic-checkpoint recipe ``ideogram4`` (a tool). The adapter and warm-up facts it reads are
``bcg_runtime/comfy/models/ideogram4.py``'s, which never imports this."""

from bcg_runtime.comfy.models.ideogram4 import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``): Ideogram 4 (9.3B) as ComfyUI 0.33.0 detects it.
RECIPE = FamilyInfo(
    name="ideogram4",
    adapter=ADAPTER,
    facts=FACTS,
    title="Ideogram 4",
    ldm_class="comfy.ldm.ideogram4.model:Ideogram4Transformer2DModel",
    supported_model="Ideogram4",
    model_base="Ideogram4",
    latent_format="Flux2",
    hidden_size=4608,
    num_heads=18,
    text_encoder="Qwen3-VL-8B (13 hidden layers concatenated)",
    latent_dimensions=2,
    depth_keys=("num_layers",),
    real_depth=(34,),
    block_attrs=("layers",),
    default_steps=20,
    default_cfg=7.0,
    config=frozen_config({"image_model": "ideogram4", "in_channels": 128, "num_layers": 34}),
    #: 9.3B parameters, fewer than FLUX.1-dev's 12B that the suite samples whole; one token per
    #: 16 pixels (4096 image tokens at 1024²): the real depth samples 512² and 1024² quickly.
    gpu_test_depth=None,
)
