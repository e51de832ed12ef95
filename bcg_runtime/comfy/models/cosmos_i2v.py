"""Cosmos 1.0 Video2World (``CosmosI2V``): the ``cosmos`` adapter (same class, same forward;
``cosmos.py`` reads it) with a recipe of the Video2World layout (``bench/recipes/cosmos_i2v.py``): ``x_embedder`` over 17 channels
plus the padding mask (latent 16 and the inverted noise mask, ``concat_keys`` ``("mask_inverted",)``
at 0.33.0 comfy/model_base.py:1416-1417; detection: comfy/model_detection.py:490)."""

from . import cosmos

ADAPTER = cosmos.ADAPTER

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = cosmos.FACTS
