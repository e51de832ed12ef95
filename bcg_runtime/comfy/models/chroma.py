"""Chroma (Chroma1-HD and its kin: ``comfy.ldm.chroma.model.Chroma``; ``supported_models.Chroma``).

A FLUX.1-schnell-shaped DiT (hidden 3072, 24 heads, 19 double + 38 single blocks, patch 2 on the
16-channel FLUX VAE latent, 1/8 of the image) whose per-block modulations come from one
"distilled guidance" MLP (``Approximator``) instead of each block's own ``Modulation``.

Text. Chroma's T5-XXL (``text_encoders/pixart_t5.py``) tokenizes with ``min_length=1`` and no
padding, and its encoder is built without attention masks (``sd3_clip.T5XXLModel``'s default
``attention_mask=False``), so the conditioning holds no ``attention_mask``: the context reaches the
DiT at its exact token count, unmasked, with all text positions at RoPE id 0. Padding it to a
bucket would add tokens every image token attends to, so each prompt length is its own graph
(``text_policy``). Workflows that pad with the T5TokenizerOptions node (``min_padding``,
``min_length``) send real, unmasked pad tokens: the padded length is the length the DiT sees. ``model_base.Flux.extra_conds`` wraps the context in ``CONDRegular``, which
batches only equal shapes: cond and uncond of different lengths run as two batch-1 calls, each
replaying its own graph; of equal length they batch into one call. A DiT ``attention_mask`` appears
only with ``attention_mask_img_shape`` (StyleModelApply's attention bias): a tensor argument, in the
key by shape, its values copied at every replay.

Host syncs and value-dependent Python, read in 0.33.0 (``comfy/ldm/chroma/model.py``); none found:

- model.py:162-176 (approximator input): ``timestep_embedding`` of ``timesteps`` and ``guidance``
  (device tensors; ``flux/layers.py:29-48`` has no sync), ``torch.arange(344)`` of a Python
  constant, repeats by ``img.shape[0]``: device work on shapes and constants only.
- model.py:115-140 ``get_modulations``: slices of the modulation tensor at offsets computed from
  block indices and the configured block counts (Python ints): no value is read.
- model.py:188/235 ``i not in self.skip_mmdit`` / ``self.skip_dit``: Python lists set empty in
  ``__init__`` that no ComfyUI code changes (a custom node editing them in place would change the
  forward without changing any key: not covered).
- model.py:193/237 ``blocks_replace`` (``patches_replace``) and ``control``: patches make the call
  eager (options.py); ControlNet outputs are tensor arguments whose structure is in the key.
- model.py:277-295 ``_forward``: padding to the patch size, ``rearrange`` and ids from ``x.shape``
  (``torch.linspace`` over Python numbers); ``guidance`` is the tensor ``model_base.Chroma``
  always adds (0 unless the conditioning sets one).
- The double/single blocks are FLUX's (``flux/layers.py``, no sync; see ``flux.py``).

The forward runs through ``WrapperExecutor`` over ``_forward`` (model.py:270-275) in both 0.8.0 and
0.33.0, so BCG sees every call. 0.33.0 adds ``img_slice`` to a copy of ``transformer_options``
(bookkeeping in options.py).
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
