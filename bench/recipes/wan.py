"""Wan 2.1 / 2.2 14B T2V: the synthetic-checkpoint recipe ``wan`` (a tool). The adapter and warm-up facts it reads
are ``bcg_runtime/comfy/models/wan.py``'s, which never imports this."""

import dataclasses

from bcg_runtime.comfy.models.wan import ADAPTER, FACTS, WanAdapter

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like Wan 2.1 / 2.2 14B T2V: dim 5120,
#: 40 heads of 128, 40 layers, FFN 13824, umT5-XXL context (4096), 16-channel latent at 8x
#: spatial and 4x temporal (4k+1 frames).
RECIPE = FamilyInfo(
    name="wan",
    adapter=ADAPTER,
    facts=FACTS,
    title="Wan 2.1 / 2.2 14B T2V",
    ldm_class="comfy.ldm.wan.model:WanModel",
    supported_model="WAN21_T2V",
    model_base="WAN21",
    latent_format="Wan21",
    hidden_size=5120,
    num_heads=40,
    text_encoder="umT5-XXL, padded to 512 tokens",
    latent_dimensions=3,
    depth_keys=("num_layers",),
    real_depth=(40,),
    block_attrs=("blocks",),
    default_steps=30,
    default_cfg=5.0,
    config=frozen_config(
        {
            "image_model": "wan2.1",
            "dim": 5120,
            "out_dim": 16,
            "num_heads": 40,
            "ffn_dim": 13824,
            "num_layers": 40,
            "patch_size": [1, 2, 2],
            "freq_dim": 256,
            "window_size": [-1, -1],
            "qk_norm": True,
            "cross_attn_norm": True,
            "eps": 1e-6,
            "in_dim": 16,
            "model_type": "t2v",
        }
    ),
    prompt_lengths=(512, 512),  # umT5 pads every prompt to 512 tokens
    # The real width at a quarter of the depth: the family's own GPU test samples 832x480 at 33
    # frames (14k tokens), where 40 blocks would take minutes of the suite's time.
    gpu_test_depth=10,
)


def variant_recipe(
    adapter: WanAdapter, name: str, title: str, supported_model: str, model_base: str, config: dict, **fields
) -> FamilyInfo:
    """A Wan 2.x variant's recipe for its own ``adapter`` (the one its module names: one fact in one
    place): the 14B T2V recipe (dim 5120, 40 heads, umT5-XXL) with the variant's detection config
    keys over it (``config``) and any other recipe field."""
    return dataclasses.replace(
        RECIPE,
        adapter=adapter,
        name=name,
        title=title,
        supported_model=supported_model,
        model_base=model_base,
        config=frozen_config({**RECIPE.config, **config}),
        **fields,
    )
