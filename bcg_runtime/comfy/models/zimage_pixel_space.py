"""Z-Image pixel space (``supported_models.ZImagePixelSpace``: ``comfy.ldm.lumina.model.NextDiTPixelSpace``),
ComfyUI 0.33.0 only (0.8.0 has no such class: its tests skip there).

Z-Image's NextDiT backbone (``zimage.py``: dim 3840, 30 heads, learned pad tokens) on raw RGB: no
VAE, the "latent" is the image (``latent_formats.ZImagePixelSpace``: 3 channels, downscale 1), so
``latent_scale`` is 1 and labels count pixels. ``x_embedder`` patchifies 16-pixel patches (a 1024²
image is 4096 tokens, Z-Image's count at 1024²) and a small per-patch MLP decoder (``dec_net``,
``SimpleMLPAdaLN`` with a DCT ``NerfEmbedder``) replaces the final layer. ``ZImagePixelSpace``
subclasses ``ZImage`` in ComfyUI, but adapters match config classes by exact name, so it has its
own adapter. No checkpoint is public (ComfyUI's PR calls it "still training"): the recipe (``bench/recipes/zimage_pixel_space.py``)
takes the backbone from Z-Image's detection and the decoder from ``NextDiTPixelSpace``'s defaults
(hidden 3840, 4 residual blocks, 8 DCT frequencies) with DeCo's 16-pixel patch.

Text: as Z-Image (``zimage.ZImageAdapter``): exact buckets of 32. ``_forward`` reaches the caption
through the same ``patchify_and_embed`` -> ``embed_cap``, and the decoder slices image tokens by the
padded caption length (``cap_size``), never by the real one.

Read for host syncs and value-dependent branches (0.33.0, ``comfy/ldm/lumina/model.py``):

- l.1046-1048 ``omni = len(ref_latents) > 0`` and the timestep concat: a Python list's length,
  in the key through ``ref_latents``' shapes (as Z-Image Omni). l.1059 NewBie's pooled branch is
  None for this config (``clip_text_pooled_proj`` absent).
- l.1054, l.1066-1075 raw pixel patches: views and reshapes by ``x.shape``; ``pad_to_patch_size`` by shapes.
- l.414-416 ``pad_zimage``, l.654-715 ``embed_cap`` / ``embed_all``, l.717-812
  ``patchify_and_embed``: pad counts, RoPE ids and ``timestep_zero_index`` from shapes; the masks
  are None (l.721, l.790, l.813). l.420 ``pos_ids_x`` reads ``rope_options`` (Python numbers from
  ``transformer_options``, in the key by options.py).
- l.1095-1100 ``double_block`` patches: any patch makes the call eager (options.py).
- l.1105-1118: the decoder reads the first ``N`` image tokens (``N`` from shapes) and prepends a
  zero caption placeholder; ``unpatchify`` loops over the batch by shape.
- l.971-980 ``SimpleMLPAdaLN``: ``weight_dtype`` from the weight's dtype; residual blocks and the
  final layer are device work.
- ``chroma_radiance/layers.py:47`` ``NerfEmbedder.fetch_pos`` is an ``lru_cache(maxsize=4)`` over
  ``(embedder, patch_size, device, dtype)`` (patch size 1 here: the decoder sees one token per
  patch): graphs read the cached DCT table by address; the entry holds it (``outside_reads``, as
  for Chroma Radiance), so an eviction from the cache frees nothing a graph reads.
- ``forward`` (l.1122) runs ``_forward`` through the DIFFUSION_MODEL ``WrapperExecutor`` and then
  ``(x - neg_x0) / timesteps`` outside it, eager on the graph's output.

No op syncs with the host, so mode 'full' is safe for every call not refused.
"""

import torch

from . import zimage
from .base import WarmupFacts
from .chroma_radiance import NERF_TABLE

ADAPTER = zimage.ZImageAdapter(
    family="zimage_pixel_space",
    display_name="Z-Image pixel space",
    config_classes=("ZImagePixelSpace",),
    max_text_length=1024,
    text_policy=zimage.ADAPTER.text_policy,
    latent_scale=1,
    outside_reads=(NERF_TABLE,),
)


def _zimage_pixel_extras(facts, batch, length, generator, guidance):
    """Qwen3-4B through CLIPTextEncode (Z-Image's encoder): no pooled output, an all-ones mask."""
    return {"pooled_output": None, "attention_mask": torch.ones(batch, length, dtype=torch.long)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=zimage.FACTS.text_dim,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=3,
    conditioning_extras=_zimage_pixel_extras,
)
