"""Krea 2 (12.9B): the synthetic-checkpoint recipe ``krea2`` (a tool). The adapter and warm-up facts it reads are
``bcg_runtime/comfy/models/krea2.py``'s, which never imports this."""

from bcg_runtime.comfy.models.krea2 import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like Krea-2 (Raw / Turbo, 12.9B) as
#: ComfyUI 0.33.0 detects it (``model_detection.py:970``).
RECIPE = FamilyInfo(
    name="krea2",
    adapter=ADAPTER,
    facts=FACTS,
    title="Krea 2 (12.9B)",
    ldm_class="comfy.ldm.krea2.model:SingleStreamDiT",
    supported_model="Krea2",
    model_base="Krea2",
    latent_format="Wan21",
    hidden_size=6144,
    num_heads=48,
    text_encoder="Qwen3-VL-4B (12 hidden layers tapped, template prefix dropped)",
    latent_dimensions=3,
    depth_keys=("layers",),
    real_depth=(28,),
    block_attrs=("blocks",),
    default_steps=28,
    default_cfg=4.5,
    config=frozen_config(
        {
            "image_model": "krea2",
            "features": 6144,
            "channels": 16,
            "patch": 2,
            "layers": 28,
            "heads": 48,
            "kvheads": 12,
            "txtlayers": 12,
            "txtdim": 2560,
        }
    ),
    #: 12.9B parameters (26 GB in bf16), about FLUX.1-dev's 12B that the suite samples whole, and
    #: 4096 image tokens at 1024² as FLUX: the real depth samples 512² and 1024² quickly on the H200.
    gpu_test_depth=None,
)
