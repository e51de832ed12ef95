"""FLUX.1 dev / schnell (``comfy.ldm.flux.model.Flux``).

ComfyUI's T5 tokenizer pads every prompt to at least 256 tokens (``min_length=256``) with real,
unmasked pad tokens, so every prompt of up to 256 tokens reaches the DiT as a 256-long context:
one graph serves them all, exactly as stock ComfyUI computes them. Longer prompts arrive at their
exact length. No op in the forward syncs with the host.
"""

import torch

from .base import ModelAdapter
from .recipe import FamilyInfo, frozen_config


class FluxAdapter(ModelAdapter):
    T5_MIN_LENGTH = 256

    def text_length_seen(self, tokens: int) -> int:
        return max(self.T5_MIN_LENGTH, tokens)


ADAPTER = FluxAdapter(
    family="flux",
    display_name="FLUX.1",
    config_classes=("Flux", "FluxSchnell"),
    max_text_length=512,
    text_policy="natural buckets, exact: T5 pads every prompt to 256 tokens (longer prompts keep their length)",
)


def _flux_extras(recipe, batch, length, generator, guidance):
    """CLIPTextEncode (T5-XXL + CLIP-L) with FluxGuidance: a pooled CLIP-L output and the guidance."""
    pooled = torch.randn(batch, recipe.pooled_dim, generator=generator, dtype=torch.float32)
    return {"pooled_output": pooled, "guidance": float(recipe.default_guidance if guidance is None else guidance)}


#: The synthetic-checkpoint recipe (``..synthetic``): ComfyUI's detection config and the family's facts.
RECIPE = FamilyInfo(
    name="flux",
    title="FLUX.1-dev",
    ldm_class="comfy.ldm.flux.model:Flux",
    supported_model="Flux",
    model_base="Flux",
    latent_format="Flux",
    hidden_size=3072,
    num_heads=24,
    text_dim=4096,
    text_encoder="T5-XXL (context) + CLIP-L (pooled)",
    pooled_dim=768,
    latent_channels=16,
    latent_dimensions=2,
    depth_keys=("depth", "depth_single_blocks"),
    real_depth=(19, 38),
    block_attrs=("double_blocks", "single_blocks"),
    default_steps=20,
    default_cfg=1.0,
    default_cond_length=256,  # the T5 tokenizer pads to min_length=256
    default_guidance=3.5,
    config=frozen_config(
        {
            "image_model": "flux",
            "axes_dim": [16, 56, 56],
            "num_heads": 24,
            "mlp_ratio": 4.0,
            "theta": 10000,
            "out_channels": 16,
            "qkv_bias": True,
            "txt_ids_dims": [],
            "in_channels": 16,
            "hidden_size": 3072,
            "context_in_dim": 4096,
            "patch_size": 2,
            "vec_in_dim": 768,
            "depth": 19,
            "depth_single_blocks": 38,
            "guidance_embed": True,
            "yak_mlp": False,
            "txt_norm": False,
        }
    ),
    conditioning_extras=_flux_extras,
    prompt_lengths=(256, 256),  # T5 pads every prompt to 256 tokens
)
