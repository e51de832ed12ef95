"""Chroma1-Radiance: the synthetic-checkpoint recipe ``chroma_radiance`` (a tool). The adapter and warm-up facts it
reads are ``bcg_runtime/comfy/models/chroma_radiance.py``'s, which never imports this."""

import dataclasses

import torch

from bcg_runtime.comfy.models.chroma_radiance import ADAPTER, FACTS

from ..recipe import frozen_config
from . import chroma

#: The synthetic-checkpoint recipe (``..synthetic``), Chroma1-Radiance as ComfyUI 0.33.0 detects it:
#: Chroma's recipe (its DiT at full depth, T5 text, the approximator) with 16-pixel patches over
#: 3 pixel channels, the conv NeRF head, no x0 prediction, zero text ids. Its GPU test depth is
#: Chroma's (two double, four single blocks): 1024² is 4096 tokens, as Chroma's at 1024², plus the
#: NeRF head over 8 tiles of 512 patches, so both sizes stay quick.
RECIPE = dataclasses.replace(
    chroma.RECIPE,
    adapter=ADAPTER,
    facts=FACTS,
    name="chroma_radiance",
    title="Chroma1-Radiance",
    ldm_class="comfy.ldm.chroma_radiance.model:ChromaRadiance",
    supported_model="ChromaRadiance",
    model_base="ChromaRadiance",
    latent_format="ChromaRadiance",
    config=frozen_config(
        {
            **chroma.RECIPE.config,
            "image_model": "chroma_radiance",
            "out_channels": 3,
            "in_channels": 3,
            "patch_size": 16,
            "nerf_hidden_size": 64,
            "nerf_mlp_ratio": 4,
            "nerf_depth": 4,
            "nerf_max_freqs": 8,
            "nerf_tile_size": 512,
            "nerf_final_head_type": "conv",
            "nerf_embedder_dtype": torch.float32,
            "use_x0": False,
            "use_sequential_txt_ids": False,
        }
    ),
    # 0.8.0's Radiance predates it (its text ids are the non-sequential ones: the same model).
    added_later=frozen_config({"use_sequential_txt_ids": False}),
)
