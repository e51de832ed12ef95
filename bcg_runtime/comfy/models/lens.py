"""Lens (``Lens``; ``comfy.ldm.lens.model.LensTransformer2DModel``, ``model_base.Lens``), ComfyUI
0.33.0 only (0.8.0 has no such class: its tests skip there).

Microsoft's dual-stream MMDiT over the FLUX.2 latent (128 channels at 16x) with a context of
GPT-OSS-20B hidden states from 4 layers side by side (4 x 2880 = 11520 wide). Nothing is keyed
beyond the tensors' shapes and nothing is refused. Text: the GPT-OSS tokenizer does not pad; the
encoder's all-ones ``attention_mask`` reaches the DiT as a tensor argument, its shape in the key
and its values copied into the graph's inputs at every replay, so every prompt length is its own
graph. The forward builds positions and the additive attention mask on the device from shapes and
that mask; ControlNet outputs are tensor arguments. No op syncs with the host, so mode 'full' is
safe. Source audit: tests/comfy/test_lens.py.
"""

import torch

from .base import ModelAdapter, WarmupFacts

#: GPT-OSS-20B's hidden width and the layers Lens stacks into its context.
ENCODER_WIDTH = 2880
ENCODER_LAYERS = 4

ADAPTER = ModelAdapter(
    family="lens",
    display_name="Lens",
    config_classes=("Lens",),
    max_text_length=1024,
    text_policy="exact length: the GPT-OSS encoder does not pad, each prompt length is its own graph",
    latent_scale=16,
)


def _lens_extras(facts, batch, length, generator, guidance):
    """``LensGptOssClipModel.encode_token_weights``: no pooled output, an all-ones mask over the
    prompt and the number of stacked layers (which ``model_base.Lens`` does not pass on)."""
    return {
        "pooled_output": None,
        "attention_mask": torch.ones(batch, length, dtype=torch.long),
        "num_layers_stacked": ENCODER_LAYERS,
    }


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=ENCODER_WIDTH * ENCODER_LAYERS,
    pooled_dim=None,
    default_cond_length=40,
    latent_channels=128,
    conditioning_extras=_lens_extras,
)
