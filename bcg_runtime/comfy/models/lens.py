"""Lens (``Lens``; ``comfy.ldm.lens.model.LensTransformer2DModel``, ``model_base.Lens``), ComfyUI
0.33.0 only (0.8.0 has no such class: its tests skip there).

Microsoft's dual-stream MMDiT: 48 blocks of 24 heads of 64 (1536 wide) over the FLUX.2 latent
(128 channels at 16x, one token per latent cell, 2x2 unpatched to 32 channels on the way out), a
context of GPT-OSS-20B hidden states from 4 layers side by side (4 x 2880 = 11520 wide, split
and normed per layer inside the DiT).

Text: the GPT-OSS tokenizer does not pad (``comfy/text_encoders/gpt_oss.py``,
``LensGptOssTokenizer``); the encoder returns an all-ones ``attention_mask`` over the prompt
(``model_base.Lens.extra_conds`` passes it, model_base.py:1111-1113), a tensor argument whose
shape is in the key and whose values are copied into the graph's inputs: every prompt length is
its own graph.

Read for host syncs and value-dependent branches (0.33.0, comfy/ldm/lens/model.py):

- ``_lens_position_ids`` (l.22-53): ``arange`` on the device from Python ints (shapes).
- ``_forward`` (l.375-490): the context is reshaped by shape; without a mask an all-ones mask is
  made on the device (l.412-415); ``_build_joint_attention_mask`` (l.499-507) turns the mask into
  an additive float mask with ``masked_fill_`` on a tensor it made (device ops).
- ``LensAttention`` (l.103-108) raises on a mask of the wrong shape (a shape check).
- ``control`` adds ControlNet outputs in place into the token tensor the forward made
  (l.481-486): a tensor argument like any other. ``patches`` / ``patches_replace`` make a call
  eager (options.py).
- No ``.item()``, ``.tolist()``, ``.cpu()`` or mask indexing, so mode 'full' is safe.
  ``LensTransformer2DModel.forward`` (l.366) runs ``_forward`` through the DIFFUSION_MODEL
  ``WrapperExecutor``.
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
