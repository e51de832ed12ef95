"""Cosmos 1.0 (``comfy.ldm.cosmos.model.GeneralDIT``; ``CosmosT2V``, ``CosmosI2V``), in ComfyUI 0.8.0
and 0.33.0.

The 7B / 14B Text2World and Video2World DiTs over ``Cosmos1CV8x8x8`` latents (16 channels at 8x
spatial and 8x temporal; labels count pixel frames). Video2World adds the inverted noise mask as a
channel of ``x``, built before the call; the start frames are in the latent the sampler mixes.
Beyond shapes the key holds ``fps``, a ``CONDConstant`` Python number from the conditioning's
``frame_rate`` that scales the RoPE time axis. Refused: a tensor ``fps``, whose ``fps.min() ==
fps.max()`` the RoPE would test on the host (:data:`TENSOR_FPS_REFUSAL`), as for Cosmos-Predict2.
Text: the Cosmos T5 tokenizer pads every prompt to 512 tokens, so prompts up to 512 tokens share one
graph per size and batch, and cond and uncond batch together; longer prompts keep their length.
The encoder's ``attention_mask`` reaches the DiT unused (a tensor argument, shape in the key).
Unlike Cosmos-Predict2's, this forward stores nothing on the module. No op syncs with the host, so
mode 'full' is safe. Source audit: tests/comfy/test_cosmos_variants.py.
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
