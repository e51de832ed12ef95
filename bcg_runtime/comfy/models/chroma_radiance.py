"""Chroma Radiance (``comfy.ldm.chroma_radiance.model.ChromaRadiance``; ``supported_models.ChromaRadiance``).

Chroma's DiT (``chroma.py``: the same T5 text rule and batching, nothing refused) in pixel space:
no VAE, the "latent" is the RGB image, so ``latent_scale`` is 1 and labels count pixels. A 16-pixel
patch conv makes the tokens and a NeRF head decodes each patch's pixels. Beyond shapes the key
holds ``transformer_options["chroma_radiance_options"]`` (``nerf_tile_size``,
``use_sequential_txt_ids``: plain values, keyed by options.py); the NeRF tiling depends only on the
patch count and the tile size, so no shape depends on values. One outside read: the NeRF
embedder's DCT table lives only in an ``lru_cache`` (``NerfEmbedder.fetch_pos``) while a graph
reads it by address, so the entry holds it (:data:`NERF_TABLE`) and an eviction frees nothing a
graph reads; a recomputed table holds the same values (patch size, ``max_freqs``, device, dtype
alone). No op syncs with the host, so mode 'full' is safe. Source audit: tests/comfy/test_chroma.py.
"""

import dataclasses

from . import chroma
from .base import ModelAdapter
from .chroma import T5_MAX_TEXT_LENGTH, T5_TEXT_POLICY

#: ``outside_reads``: the NeRF embedder's cached DCT table, first read by ``dct.repeat(B, 1, 1)``
#: (layers.py:125), shared with Z-Image pixel space's decoder.
NERF_TABLE = (
    ("aten.repeat.default", "float32"),
    "NerfEmbedder.fetch_pos's lru-cached DCT table (layers.py:47): values from the patch size, max_freqs, "
    "device and dtype alone; held by the entry, so an eviction from the cache frees nothing a graph reads",
)


ADAPTER = ModelAdapter(
    family="chroma_radiance",
    display_name="Chroma Radiance",
    config_classes=("ChromaRadiance",),
    max_text_length=T5_MAX_TEXT_LENGTH,
    text_policy=T5_TEXT_POLICY,
    latent_scale=1,
    outside_reads=(NERF_TABLE,),
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = dataclasses.replace(chroma.FACTS, latent_channels=3)
