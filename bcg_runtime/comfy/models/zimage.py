"""Z-Image and Z-Image-Turbo (Lumina2 ``NextDiT`` with the Z-Image config).

The DiT receives the caption at its exact token count (``num_tokens`` is a constant of the call)
and pads it to a multiple of 32 itself, with a *learned* pad token that every other token attends
to. Padding the caption ourselves would change the output (SGLang measured 21 dB PSNR drift doing
exactly that), so each exact caption length is its own graph; the warm-up takes the workflow's
CONDITIONING to capture the lengths it will really send.
"""

import torch

from .base import ModelAdapter, WarmupFacts
from .recipe import FamilyInfo, frozen_config

ADAPTER = ModelAdapter(
    family="zimage",
    display_name="Z-Image",
    config_classes=("ZImage",),
    max_text_length=1024,
    text_policy="exact length: the model pads captions with learned tokens itself; each caption length is its own graph",
)


def _zimage_extras(facts, batch, length, generator, guidance):
    """Qwen3-4B through CLIPTextEncode: no pooled output, an all-ones attention mask."""
    return {"pooled_output": None, "attention_mask": torch.ones(batch, length, dtype=torch.long)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=2560,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=16,
    conditioning_extras=_zimage_extras,
)


#: The synthetic-checkpoint recipe (``..synthetic``): ComfyUI's detection config and the family's facts.
RECIPE = FamilyInfo(
    name="zimage",
    adapter=ADAPTER,
    facts=FACTS,
    title="Z-Image / Z-Image-Turbo",
    ldm_class="comfy.ldm.lumina.model:NextDiT",
    supported_model="ZImage",
    model_base="Lumina2",
    latent_format="Flux",
    hidden_size=3840,
    num_heads=30,
    text_encoder="Qwen3-4B (hidden layer -2)",
    latent_dimensions=2,
    depth_keys=("n_layers",),
    real_depth=(30,),
    block_attrs=("layers",),
    default_steps=8,
    default_cfg=1.0,
    config=frozen_config(
        {
            "image_model": "lumina2",
            "patch_size": 2,
            "in_channels": 16,
            "dim": 3840,
            "cap_feat_dim": 2560,
            "n_layers": 30,
            "qk_norm": True,
            "n_heads": 30,
            "n_kv_heads": 30,
            "axes_dims": [32, 48, 48],
            "axes_lens": [1536, 512, 512],
            "rope_theta": 256.0,
            "ffn_dim_multiplier": 8.0 / 3.0,
            "z_image_modulation": True,
            "time_scale": 1000.0,
            "pad_tokens_multiple": 32,
        }
    ),
)
