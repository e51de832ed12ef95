"""PixelDiT (``PixelDiTT2I``; ``comfy.ldm.pixeldit.model.PixDiT_T2I``) and PiD, the Pixel Diffusion
Decoder (``PiD``; ``comfy.ldm.pixeldit.pid.PidNet``, a ``PixDiT_T2I`` subclass), ComfyUI 0.33.0
only (0.8.0 has neither class: their tests skip there). One adapter serves both; PiD's module is
``pixeldit_pid.py``.

A pixel-space DiT: no VAE, the "latent" is the RGB image, so ``latent_scale`` is 1 and labels count
pixels. Nothing is keyed beyond the tensors' shapes (and ``rope_options``, keyed by options.py) and
nothing is refused: PiD's low-quality latent (``lq_latent``) and ``degrade_sigma`` are tensor
arguments, in the key by shape and read live at every replay. Text: the Gemma-2 tokenizer pads
every prompt to 300 tokens and the encoder cuts longer ones, so every prompt reaches the DiT as a
300-long context: one graph serves them all and cond and uncond batch; the attention mask passed
is not used by the forward. No op syncs with the host (loops and sizes follow shapes), so mode
'full' is safe. Source audit: tests/comfy/test_pixeldit.py.
"""

import torch

from .base import ModelAdapter, WarmupFacts

#: Every prompt's context length at the DiT (padded, or cut, to 300 tokens).
CONTEXT_LENGTH = 300

ADAPTER = ModelAdapter(
    family="pixeldit",
    display_name="PixelDiT",  # PiD included: the same forward with the LQ branch
    config_classes=("PixelDiTT2I", "PiD"),
    max_text_length=CONTEXT_LENGTH,
    text_policy="one bucket, exact: the Gemma-2 tokenizer pads (and the encoder cuts) every prompt to 300 tokens",
    latent_scale=1,
)


def _pixeldit_extras(facts, batch, length, generator, guidance):
    """``PixelDiTGemma2TE.encode_token_weights``: no pooled output, the attention mask over the 300
    tokens (all ones here; the DiT does not read it)."""
    return {"pooled_output": None, "attention_mask": torch.ones(batch, length, dtype=torch.long)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=2304,
    pooled_dim=None,
    default_cond_length=CONTEXT_LENGTH,
    latent_channels=3,
    conditioning_extras=_pixeldit_extras,
)
