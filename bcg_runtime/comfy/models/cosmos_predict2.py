"""Cosmos-Predict2 text-to-image (``supported_models.CosmosT2IPredict2``:
``comfy.ldm.cosmos.predict2.MiniTrainDIT``), in ComfyUI 0.8.0 and 0.33.0.

The 2B checkpoint: 28 blocks of 2048 (16 heads of 128) with AdaLN-LoRA (256), self-attention with
3-D RoPE over the patches, cross-attention to a T5-XXL context (1024), Wan 2.1's latent (16
channels at 8x, 5-D; an image is one frame: ``fix_empty_latent_channels`` unsqueezes T = 1), a
padding-mask channel concatenated inside the forward. The Video2World class
(``CosmosI2VPredict2``, 17 channels, the same forward) has its own adapter in
``cosmos_predict2_i2v.py`` (its recipe in ``bench/recipes/``); Anima's DiT is this one behind a text adapter (``anima.py``).

Text: the Cosmos T5 tokenizer pads every prompt to 512 tokens (``min_length=512``, padding rows
zeroed by the encoder; ``model_base.CosmosPredict2`` drops the mask), so prompts up to 512 tokens
share one graph per size and batch, and cond and uncond batch together; longer prompts keep their
length (their own graph).

Read for host syncs and value-dependent branches (ComfyUI 0.33.0, comfy/ldm/cosmos/):

- ``position_embedding.py:137`` ``fps.min() == fps.max()`` would sync for a tensor ``fps``.
  ``model_base.CosmosPredict2`` sends ``fps`` as a ``CONDConstant`` of the conditioning's
  ``frame_rate``: None for text-to-image, else a Python number (in the key, like every plain
  argument; detection turns fps modulation off, so ``:145`` never uses it). A tensor ``fps`` is
  refused (:meth:`CosmosPredict2Adapter.refusal`).
- ``predict2.py:806`` the padding mask: ``model_base`` never passes one, so it is zeros built from
  shapes; ``:879`` ``timesteps.ndim`` (5-D ``denoise_mask`` makes ``process_timestep`` send
  ``[B, T]`` timesteps): shapes. ``denoise_mask`` itself reaches ``_forward`` as an unused keyword
  argument, a tensor whose shape is in the key.
- ``predict2.py:918`` fp16 residual stream in float32: the dtype, in the key.
- ``predict2.py:887-889`` ``self.affline_scale_log_info``, ``self.affline_emb``,
  ``self.crossattn_emb`` are stored on the module "for logging"; nothing in ComfyUI reads them (a
  replay leaves them pointing at the capture's tensors). Being new tensors after every call, they
  would read as moved weights at each run's address check and drop every graph: the adapter names
  them ``forward_scratch_attributes``, which the check leaves out.
- ``predict2.py:161``, ``:584``, ``:898`` ``attn1_patch`` / ``attn2_patch`` / ``mlp_patch`` /
  ``post_input`` patches: any patch makes the call eager (``options.py``). ``:922``
  ``block_index`` is bookkeeping.
- ``predict2.py:187`` ``comfy_kitchen`` ``rms_rope_split_half``: backend from shapes and dtypes;
  0.8.0 computes the rotation in plain torch. ``position_embedding.py`` buffers move with the model.

No op syncs with the host, so mode 'full' is safe. ``forward`` runs ``_forward`` through the
DIFFUSION_MODEL ``WrapperExecutor`` in both hosts (0.33.0 ``predict2.py:839``).
"""

import dataclasses
from typing import Any

import torch

from .base import ModelAdapter, WarmupFacts

TENSOR_FPS_REFUSAL = (
    "Cosmos-Predict2 with a tensor fps: the RoPE compares fps.min() with fps.max() on the host, "
    "which a graph would freeze; running eager"
)


@dataclasses.dataclass(frozen=True)
class CosmosPredict2Adapter(ModelAdapter):
    def refusal(self, call: dict[str, Any]) -> str | None:
        if isinstance(call.get("fps"), torch.Tensor):
            return TENSOR_FPS_REFUSAL
        return None


ADAPTER = CosmosPredict2Adapter(
    family="cosmos_predict2",
    display_name="Cosmos-Predict2",
    config_classes=("CosmosT2IPredict2",),
    max_text_length=1024,
    text_policy="natural buckets, exact: T5 pads every prompt to 512 tokens (longer prompts keep their length)",
    forward_scratch_attributes=("affline_scale_log_info", "affline_emb", "crossattn_emb"),
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=1024,
    pooled_dim=None,
    default_cond_length=512,
    latent_channels=16,
)
