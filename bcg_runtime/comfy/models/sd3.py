"""Stable Diffusion 3 medium and 3.5 Large / Medium (``comfy.ldm.modules.diffusionmodules.mmdit``
``OpenAISignatureMMDITWrapper``, an ``MMDiT``; ``model_base.SD3``).

``MMDiT.forward`` calls its blocks directly: it has no ``_forward`` and runs no DIFFUSION_MODEL
``WrapperExecutor`` (0.8.0 and 0.33.0), so BCG Apply installs, on its clone only, the object patch
``diffusion_model.forward`` (``wrappers._ForwardThroughBCG``), which runs the class's own forward
through BCG's DIFFUSION_MODEL hook. Nothing is keyed beyond the tensors' shapes (ControlNet outputs
are arguments) and nothing is refused. Text: CLIP-L and CLIP-G side by side (77 tokens per
75-token chunk) then T5-XXL's tokens (at least 77, real unmasked pads; longer prompts keep their
length); the DiT applies no mask, so each context length is its own graph. A prompt of up to 75
tokens reaches the DiT as 154 tokens, the usual empty negative too, so cond and uncond of short
prompts share a graph. No op syncs with the host (its branches read shapes and constants), so mode
'full' is safe. Detection builds ``depth`` = width / 64 blocks: the recipe's depth sets width and
block count together. Source audit: tests/comfy/test_sd3.py.
"""

import torch

from .base import ModelAdapter, WarmupFacts

T5_DIM = 4096

ADAPTER = ModelAdapter(
    family="sd3",
    display_name="SD3",
    config_classes=("SD3",),
    max_text_length=1024,
    text_policy=(
        "exact length: CLIP-L/G (77 tokens per chunk) then T5 (at least 77, unmasked pads); "
        "prompts of up to 75 tokens reach the DiT as 154 tokens, each length is its own graph"
    ),
)


def _sd3_extras(facts, batch, length, generator, guidance):
    """CLIPTextEncode with the SD3 clip (CLIP-L + CLIP-G + T5-XXL): pooled CLIP-L and CLIP-G side by
    side (768 + 1280); no attention mask (``t5_attention_mask`` is off by default, and
    ``model_base.SD3`` passes none to the DiT)."""
    return {"pooled_output": torch.randn(batch, facts.pooled_dim, generator=generator, dtype=torch.float32)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=T5_DIM,
    pooled_dim=2048,
    default_cond_length=154,
    latent_channels=16,
    conditioning_extras=_sd3_extras,
)
