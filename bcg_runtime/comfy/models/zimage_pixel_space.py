"""Z-Image pixel space (``supported_models.ZImagePixelSpace``: ``comfy.ldm.lumina.model.NextDiTPixelSpace``),
ComfyUI 0.33.0 only (0.8.0 has no such class: its tests skip there).

Z-Image's NextDiT backbone on raw RGB (``latent_scale`` 1: labels count pixels; 16-pixel patches)
with a per-patch MLP decoder (``dec_net``) in place of the final layer. Text: as Z-Image
(``zimage.ZImageAdapter``): exact buckets of 32; ``_forward`` reaches the caption through the same
``patchify_and_embed`` -> ``embed_cap``, and the decoder slices image tokens by the padded caption
length, never the real one. The NeRF DCT table ``NerfEmbedder.fetch_pos`` keeps in an
``lru_cache`` is read by address: every graph holds it (``outside_reads``), so an eviction from the
cache frees nothing a graph reads. Patches make a call eager (``options.py``). No op syncs with the
host, so mode 'full' is safe. The source audit: ``tests/comfy/test_zimage_pixel_space.py``.
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
    # The decoder's DCT table is in the DiT's dtype here (its NerfEmbedder gets the model's).
    outside_reads=(
        (NERF_TABLE[0] + ("cpu",), NERF_TABLE[1]),
        (("aten.repeat.default", "bfloat16", "cuda"), NERF_TABLE[1]),
    ),
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
