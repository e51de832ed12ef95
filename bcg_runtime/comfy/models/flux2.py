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
from .recipe import FamilyInfo, frozen_config


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


#: The synthetic-checkpoint recipe (``..synthetic``), shaped like FLUX.2 [klein] 4B: hidden 3072,
#: 24 heads, 5 double and 20 single blocks, Qwen3-4B context (3 layers x 2560 = 7680), no guidance
#: embedding (the distilled klein runs at cfg 1 in 4 steps).
RECIPE = FamilyInfo(
    name="flux2",
    adapter=ADAPTER,
    facts=FACTS,
    title="FLUX.2 [klein] 4B",
    ldm_class="comfy.ldm.flux.model:Flux",
    supported_model="Flux2",
    model_base="Flux2",
    latent_format="Flux2",
    hidden_size=3072,
    num_heads=24,
    text_encoder="Qwen3-4B (3 hidden layers concatenated), padded to 512 tokens",
    latent_dimensions=2,
    depth_keys=("depth", "depth_single_blocks"),
    real_depth=(5, 20),
    block_attrs=("double_blocks", "single_blocks"),
    default_steps=4,
    default_cfg=1.0,
    config=frozen_config(
        {
            "image_model": "flux2",
            "axes_dim": [32, 32, 32, 32],
            "num_heads": 24,
            "mlp_ratio": 3.0,
            "theta": 2000,
            "out_channels": 128,
            "global_modulation": True,
            "mlp_silu_act": True,
            "qkv_bias": False,
            "ops_bias": False,
            "default_ref_method": "index",
            "ref_index_scale": 10.0,
            "txt_ids_dims": [3],
            "in_channels": 128,
            "hidden_size": 3072,
            "context_in_dim": 7680,
            "patch_size": 1,
            "vec_in_dim": None,
            "depth": 5,
            "depth_single_blocks": 20,
            "guidance_embed": False,
            "yak_mlp": False,
            "txt_norm": False,
        }
    ),
    prompt_lengths=(300, 77),  # both arrive padded to 512
)
