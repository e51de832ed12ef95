"""Cosmos 1.0 (``comfy.ldm.cosmos.model.GeneralDIT``; ``CosmosT2V``, ``CosmosI2V``), in ComfyUI 0.8.0
and 0.33.0.

The 7B checkpoints (Cosmos-1.0-Diffusion-7B-Text2World / -Video2World): 28 blocks of 4096 (32 heads
of 128), each a full-attention, a cross-attention (T5-XXL, 1024) and an MLP sub-block with
AdaLN-LoRA (256), 3-D RoPE with fps modulation, a learnable per-block absolute position embedding
(``extra_pos_embedder``), blocks in ``THWBD`` layout, a padding-mask channel concatenated inside the
forward; the 14B ones are 36 blocks of 5120. Latents are ``Cosmos1CV8x8x8``: 16 channels at 8x
spatial and 8x temporal (``EmptyCosmosLatentVideo``: T = (frames-1)//8 + 1). Detection fixes the
block count by width (0.33.0 comfy/model_detection.py:505-525). Video2World (``CosmosI2V``, 17
channels) adds the inverted noise mask as a channel of ``x`` (``concat_keys`` ``("mask_inverted",)``,
model_base.py:1416-1417); the start frames are in the latent itself (``CosmosImageToVideoLatent``
with a ``noise_mask``), which the sampler mixes in before the call.

Text: the Cosmos T5 tokenizer pads every prompt to 512 tokens (``min_length=512``,
comfy/text_encoders/cosmos.py:25; the encoder zeroes the padding rows), so prompts up to 512
tokens share one graph per size and batch, and cond and uncond batch together; longer prompts keep
their length. The encoder's ``attention_mask`` reaches the DiT (model_base.py:1421-1423) and is
unused there (``use_cross_attn_mask`` is False in every detected config): a tensor argument whose
shape is in the key.

Read for host syncs and value-dependent branches (0.33.0, comfy/ldm/cosmos/):

- ``position_embedding.py:137`` ``fps.min() == fps.max()`` would sync for a tensor ``fps``.
  ``model_base.CosmosVideo`` sends ``fps`` as a ``CONDConstant`` of the conditioning's
  ``frame_rate`` (model_base.py:1428): None without one, else a Python number, in the key like
  every plain argument (``:145-148`` scale the temporal positions by it). A tensor ``fps`` is
  refused (:data:`TENSOR_FPS_REFUSAL`), as for Cosmos-Predict2.
- ``model.py:389-394`` the cross-attention mask is None (``use_cross_attn_mask`` False), so
  ``model.py:404`` ``if crossattn_mask:`` never tests a tensor; ``model.py:396``
  ``x_format`` is a fixed config.
- ``model.py:282-290`` the padding mask: ``model_base`` never passes one, so it is zeros built from
  shapes; ``position_embedding.py:193-207`` crops the learnable tables by shapes.
- ``model.py:377``: ``affline_scale_log_info`` is a local dict (unlike Cosmos-Predict2, this
  forward stores nothing on the module). ``blocks.py:285`` builds the timestep frequencies on the
  device from the config.

No op syncs with the host, so mode 'full' is safe. ``GeneralDIT.forward`` runs ``_forward`` through
the DIFFUSION_MODEL ``WrapperExecutor`` in both hosts (0.33.0 model.py:423-441).
"""

from typing import Any

import torch

from .base import WarmupFacts
from .cosmos_predict2 import CosmosPredict2Adapter

TENSOR_FPS_REFUSAL = (
    "Cosmos with a tensor fps: the RoPE compares fps.min() with fps.max() on the host, which a graph would freeze; "
    "running eager"
)


class CosmosAdapter(CosmosPredict2Adapter):
    """Cosmos-Predict2's tensor-fps refusal, with this family's text."""

    def refusal(self, call: dict[str, Any]) -> str | None:
        return TENSOR_FPS_REFUSAL if super().refusal(call) else None


ADAPTER = CosmosAdapter(
    family="cosmos",
    display_name="Cosmos 1.0",
    config_classes=("CosmosT2V", "CosmosI2V"),
    max_text_length=1024,
    text_policy="natural buckets, exact: T5 pads every prompt to 512 tokens (longer prompts keep their length)",
    latent_scale=8,
    temporal_scale=8,
)


def cosmos_t5_extras(facts, batch, length, generator, guidance):
    """The Cosmos T5-XXL node: no pooled output; the encoder's mask over the padded context (ones
    for a random number of prompt tokens, zeros for the pads), which the DiT does not read."""
    real = int(torch.randint(1, length + 1, (1,), generator=generator))
    mask = torch.zeros(batch, length, dtype=torch.long)
    mask[:, :real] = 1
    return {"pooled_output": None, "attention_mask": mask}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=1024,
    pooled_dim=None,
    default_cond_length=512,
    latent_channels=16,
    conditioning_extras=cosmos_t5_extras,
)
