"""Anima (2B): the synthetic-checkpoint recipe ``anima`` (a tool). The adapter and warm-up facts it reads are
``bcg_runtime/comfy/models/anima.py``'s, which never imports this."""

from bcg_runtime.comfy.models.anima import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config
from . import cosmos_predict2

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like Anima (2B): Cosmos-Predict2 2B
#: text-to-image with the LLM adapter (its shape is fixed in the class, not detected).
RECIPE = FamilyInfo(
    name="anima",
    adapter=ADAPTER,
    facts=FACTS,
    title="Anima (2B)",
    ldm_class="comfy.ldm.anima.model:Anima",
    supported_model="Anima",
    model_base="Anima",
    latent_format="Wan21",
    hidden_size=2048,
    num_heads=16,
    text_encoder="Qwen3-0.6B with T5 token ids, through the model's LLM adapter (padded to 512 rows)",
    latent_dimensions=3,
    depth_keys=("num_blocks",),
    real_depth=(28,),
    block_attrs=("blocks",),
    default_steps=30,
    default_cfg=4.0,
    config=frozen_config({**cosmos_predict2.RECIPE.config, "image_model": "anima"}),
    #: 2B parameters: the whole model samples 512² and 1024² on the H200 in seconds.
    gpu_test_depth=None,
)
