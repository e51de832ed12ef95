"""FLUX.2 [dev] 32B: the synthetic-checkpoint recipe ``flux2_dev`` (a tool). The adapter and warm-up facts it reads
are ``bcg_runtime/comfy/models/flux2_dev.py``'s, which never imports this."""

from bcg_runtime.comfy.models.flux2_dev import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config
from . import flux2

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like FLUX.2 [dev].
RECIPE = FamilyInfo(
    name="flux2_dev",
    adapter=ADAPTER,
    facts=FACTS,
    title="FLUX.2 [dev] 32B",
    ldm_class=flux2.RECIPE.ldm_class,
    supported_model="Flux2",
    model_base="Flux2",
    latent_format="Flux2",
    hidden_size=6144,
    num_heads=48,
    text_encoder="Mistral-Small-3.1 24B (3 hidden layers concatenated), padded to 512 tokens",
    latent_dimensions=2,
    depth_keys=flux2.RECIPE.depth_keys,
    real_depth=(8, 48),
    block_attrs=flux2.RECIPE.block_attrs,
    default_steps=28,
    default_cfg=1.0,
    config=frozen_config(
        {
            **flux2.RECIPE.config,
            "num_heads": 48,
            "hidden_size": 6144,
            "context_in_dim": 15360,
            "depth": 8,
            "depth_single_blocks": 48,
            "guidance_embed": True,
        }
    ),
    prompt_lengths=flux2.RECIPE.prompt_lengths,
    # Two double and four single blocks at the real width: the whole 32B model would not sample in
    # the suite's time.
    gpu_test_depth=(2, 4),
)
