"""OmniGen2 (``supported_models.Omnigen2``: ``comfy.ldm.omnigen.omnigen2.OmniGen2Transformer2DModel``),
in ComfyUI 0.8.0 and 0.33.0.

A Lumina-style single-stream DiT with a Qwen2.5-VL-3B caption and reference latents (image
editing) as extra token streams. Beyond shapes the key holds ``num_tokens`` (a ``CONDConstant``
Python int); ``ref_latents`` is a list argument whose shapes are in the key and whose values are
copied at replay; nothing is refused. Text: the Qwen2.5 tokenizer does not pad, caption positions
are ``0..num_tokens-1`` and the image positions follow them, so each caption length is its own
graph; cond and uncond of different lengths run as two batch-1 calls. The mask's ``.item()`` runs
in ``extra_conds``, once per conditioning before sampling, not in the forward. The class has no
``_forward`` and runs no DIFFUSION_MODEL wrappers, so BCG reaches its calls through
``wrappers._ForwardThroughBCG`` (the object patch ``diffusion_model.forward``), as for SD3. No op
syncs with the host, so mode 'full' is safe. Source audit: tests/comfy/test_omnigen2.py.
"""

import torch

from .base import ModelAdapter, WarmupFacts

ADAPTER = ModelAdapter(
    family="omnigen2",
    display_name="OmniGen2",
    config_classes=("Omnigen2",),
    max_text_length=1024,
    text_policy="exact length: Qwen2.5-VL captions are unpadded and image positions follow them; each caption length is its own graph",
)


def _omnigen2_extras(facts, batch, length, generator, guidance):
    """Qwen2.5-VL-3B through CLIPTextEncode: no pooled output, an all-ones attention mask (from
    which ``model_base.Omnigen2.extra_conds`` takes ``num_tokens``, then drops it)."""
    return {"pooled_output": None, "attention_mask": torch.ones(batch, length, dtype=torch.long)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=2048,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=16,
    conditioning_extras=_omnigen2_extras,
)
