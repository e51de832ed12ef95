"""FLUX.1 Fill (``supported_models.FluxInpaint``: ``comfy.ldm.flux.model.Flux`` with 96 input
channels), in ComfyUI 0.8.0 and 0.33.0.

The FLUX.1 forward and text policy (``flux.py`` names its host reads; this adapter is FLUX.1's with
its own family name, so it stays off until its own GPU test passed). What the class adds is input
channels: ``model_base.Flux.concat_cond`` (0.33.0 model_base.py:984-1020) concatenates to the
16-channel latent the masked image's latent (16 channels, from ``concat_latent_image``, zeros
without one) and the mask folded 8x8 into 64 channels (from ``concat_mask``, else the latent's
``noise_mask``, ones without one), so ``x`` always reaches the DiT with 96 channels. Both are
built before the call from the conditioning (``InpaintModelConditioning``) and the latent: shapes
in the key, values copied into the graph's inputs at every replay; nothing in the forward reads
them on the host. ``guidance_embed`` is on (FLUX.1 Fill [dev] is guidance-distilled; its
workflows set FluxGuidance 30).
"""

import dataclasses

from . import flux

ADAPTER = dataclasses.replace(
    flux.ADAPTER,
    family="flux_fill",
    display_name="FLUX.1 Fill",
    config_classes=("FluxInpaint",),
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = dataclasses.replace(flux.FACTS, default_guidance=30.0)
