"""FLUX.2 [dev] 32B: the ``flux2`` adapter (same class, same forward, same text policy) with a
recipe of dev's shape (``bench/recipes/flux2_dev.py``), the FLUX.2 every ComfyUI release builds.

FLUX.2 [dev] is 6144 wide with 48 heads of 128, 8 double and 48 single blocks, a Mistral-Small-3.1
context (3 hidden layers x 5120 = 15360) and a guidance embedding (guidance-distilled, cfg 1).
ComfyUI 0.8.0's detection gives every FLUX.2 48 heads, so the klein-shaped recipe (``flux2``) cannot
be built there; this one is detected alike by 0.8.0 and 0.33.0, so FLUX.2 is tested on both.
"""

from . import flux2
from .base import WarmupFacts

ADAPTER = flux2.ADAPTER


def _dev_extras(facts, batch, length, generator, guidance):
    """CLIPTextEncode (Mistral-3) with FluxGuidance: no pooled output, the distilled guidance."""
    return {"pooled_output": None, "guidance": float(facts.default_guidance if guidance is None else guidance)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=15360,
    pooled_dim=None,
    default_cond_length=512,
    latent_channels=128,
    default_guidance=4.0,
    conditioning_extras=_dev_extras,
)
