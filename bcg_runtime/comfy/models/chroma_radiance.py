"""Chroma Radiance (``comfy.ldm.chroma_radiance.model.ChromaRadiance``; ``supported_models.ChromaRadiance``).

Chroma's DiT (see ``chroma.py``: same approximator, blocks, T5 text path and batching of cond and
uncond) in pixel space: no VAE, the "latent" is the RGB image itself (``latent_formats.ChromaRadiance``:
3 channels, ``spacial_downscale_ratio`` 1; ``EmptyChromaRadianceLatentImage`` makes
``[B, 3, height, width]``), so the adapter's ``latent_scale`` and the recipe's ``latent_downscale``
are 1 and labels count pixels. A 16-pixel patch conv (``img_in_patch``) makes the tokens (a 1024²
image is 64x64 = 4096 tokens, as FLUX at 1024²), and a NeRF head turns each token's hidden state
into the weights of a per-patch MLP over that patch's pixels.

Host syncs and value-dependent Python, read in 0.33.0 (``comfy/ldm/chroma_radiance/``); none,
and one cached tensor:

- model.py:303-323 ``_forward``: padding to the patch size and ids from ``x.shape``;
  ``radiance_get_override_params`` reads ``transformer_options["chroma_radiance_options"]``
  (ChromaRadianceOptions: ``nerf_tile_size``, ``use_sequential_txt_ids``), plain values that
  options.py puts in the key; ``use_sequential_txt_ids`` adds an ``arange`` over the context length.
- model.py:184-226 ``forward_nerf``: ``unfold``/``fold`` and reshapes by shapes; the tiling branch
  (model.py:203) and its loop (model.py:246, ``range(0, num_patches, tile_size)``) depend only on
  the patch count and the tile size (512, or the option): the unpatching has no data-dependent shape.
- model.py:340 x0 checkpoints (``__x0__`` buffer) divide by ``timesteps`` on the device.
- layers.py:150-173 ``NerfGLUBlock``: generated weights, ``normalize`` and ``bmm``: device work.
- layers.py:47-48 ``NerfEmbedder.fetch_pos`` is an ``lru_cache(maxsize=4)`` over
  ``(embedder, patch_size, device, dtype)``: the DCT table is computed once (in the eager runs before
  a capture) and kept only by that cache, while a graph reads it by address. The runner finds it
  at capture as an outside read and the entry holds it (:data:`NERF_TABLE`), so an eviction (more
  than four embedder/device/dtype combinations in one process) frees nothing a graph reads; the
  table a later eager call recomputes holds the same values, which depend only on the patch size,
  the embedder's ``max_freqs``, the device and the dtype.

The forward is ``Chroma.forward`` (the ``WrapperExecutor`` over ``_forward``) in 0.8.0 and 0.33.0.
ComfyUI 0.8.0's Radiance predates ``use_sequential_txt_ids``; the recipe's value (False) is what
0.8.0 does, so the recipe (``bench/recipes/chroma_radiance.py``) builds there without it (``FamilyInfo.added_later``).
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
