"""FLUX.2 dev and klein (``comfy.ldm.flux.model.Flux`` with the ``flux2`` config; ``Flux2``).

The same forward as FLUX.1 (read for host syncs: none; reference latents only steer Python by
their shapes and by ``ref_latents_method``, a string), with global modulation, SiLU-gated MLPs and
4-axis RoPE. ComfyUI's ``model_base.Flux2.extra_conds`` left-pads every text context shorter than
512 tokens to 512 with zeros before the DiT, whatever the encoder (Mistral-3 for dev, Qwen3 for
klein), so every prompt of up to 512 tokens reaches the DiT as one 512-long context: one graph
serves them all, exactly as stock ComfyUI computes them. Longer prompts keep their length. The
latent is 128 channels at 1/16 of the image (``EmptyFlux2LatentImage``). Edit workflows pass
``ref_latents``: their shapes are in the key like every tensor argument.
"""

import dataclasses

from .base import ModelAdapter, WarmupFacts


class Flux2Adapter(ModelAdapter):
    PADDED_LENGTH = 512

    def text_length_seen(self, tokens: int) -> int:
        return max(self.PADDED_LENGTH, tokens)

    def for_model(self, model_patcher):
        """FLUX.2's sizes differ in their text encoder, so in the context width (``context_in_dim``
        of the detected config: klein 4B 7680, klein 9B 12288, dev 15360): this model's, for the
        prompts a zero-config warm-up builds."""
        config = (
            getattr(getattr(getattr(model_patcher, "model", None), "model_config", None), "unet_config", None) or {}
        )
        width = config.get("context_in_dim")
        return self if width is None or width == self.text_dim else dataclasses.replace(self, text_dim=width)


ADAPTER = Flux2Adapter(
    family="flux2",
    display_name="FLUX.2",
    config_classes=("Flux2",),
    max_text_length=1024,
    text_policy="natural buckets, exact: ComfyUI pads every context to 512 tokens before the DiT (longer prompts keep their length)",
    latent_scale=16,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=7680,
    pooled_dim=None,
    default_cond_length=512,
    latent_channels=128,
)
