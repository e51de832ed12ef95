"""Cosmos-Predict2 text-to-image (``supported_models.CosmosT2IPredict2``:
``comfy.ldm.cosmos.predict2.MiniTrainDIT``), in ComfyUI 0.8.0 and 0.33.0.

The 2B DiT with a T5-XXL context over Wan 2.1's latent (5-D; an image is one frame); Video2World
(``cosmos_predict2_i2v.py``) and Anima (``anima.py``) build on this adapter. Beyond shapes the key
holds ``fps``, a ``CONDConstant`` Python number (None for text-to-image). Refused: a tensor
``fps``, whose ``fps.min() == fps.max()`` the RoPE would test on the host (:data:`TENSOR_FPS_REFUSAL`).
The forward stores ``affline_scale_log_info``, ``affline_emb`` and ``crossattn_emb`` on the module
"for logging" (nothing reads them); new tensors after every call, they would read as moved weights
and drop every graph, so ``forward_scratch_attributes`` leaves them out of the address check.
Text: the Cosmos T5 tokenizer pads every prompt to 512 tokens (the mask is dropped), so prompts up
to 512 tokens share one graph per size and batch, and cond and uncond batch together; longer
prompts keep their length. No op syncs with the host, so mode 'full' is safe. Source audit:
tests/comfy/test_cosmos_predict2.py.
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
