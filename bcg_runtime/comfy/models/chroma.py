"""Chroma (Chroma1-HD and its kin: ``comfy.ldm.chroma.model.Chroma``; ``supported_models.Chroma``).

A FLUX.1-schnell-shaped DiT whose per-block modulations come from one "distilled guidance" MLP
(``Approximator``). Nothing is keyed beyond the tensors' shapes and nothing is refused; a DiT
``attention_mask`` (only StyleModelApply's attention bias) is a tensor argument, its values copied
at every replay. Text: Chroma's T5-XXL tokenizes with ``min_length=1``, no padding and no mask, and
all text positions sit at RoPE id 0, so padding would add tokens every image token attends to:
each prompt length is its own graph (T5TokenizerOptions' padding sends real, unmasked pad tokens:
the padded length is the length the DiT sees). Cond and uncond of different lengths run as two
batch-1 calls; of equal length they batch into one. No op syncs with the host, so mode 'full' is
safe. Not covered: a custom node editing ``skip_mmdit`` / ``skip_dit`` in place would change the
forward without changing any key. Source audit: tests/comfy/test_chroma.py.
"""

from .base import ModelAdapter, WarmupFacts

#: Text facts shared with Chroma Radiance (same encoder, same conditioning path).
T5_TEXT_POLICY = (
    "exact length: T5 prompts arrive unpadded and unmasked (min_length=1), each prompt length is its own graph"
)
T5_MAX_TEXT_LENGTH = 512

ADAPTER = ModelAdapter(
    family="chroma",
    display_name="Chroma",
    config_classes=("Chroma",),
    max_text_length=T5_MAX_TEXT_LENGTH,
    text_policy=T5_TEXT_POLICY,
)


def chroma_extras(facts, batch, length, generator, guidance):
    """CLIPTextEncode with Chroma's T5-only encoder: no pooled output, no attention mask.
    ``model_base.Chroma`` adds ``guidance`` 0 itself unless a node (FluxGuidance) sets one."""
    extras = {"pooled_output": None}
    if guidance is not None:
        extras["guidance"] = float(guidance)
    return extras


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=4096,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=16,
    conditioning_extras=chroma_extras,
)
