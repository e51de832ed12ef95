"""Anima (``supported_models.Anima``: ``comfy.ldm.anima.model.Anima``), ComfyUI 0.33.0 (0.8.0 has no
such class).

A Cosmos-Predict2 2B text-to-image DiT (``MiniTrainDIT``: 28 blocks of 2048, 16 heads, Wan 2.1's
latent, 5-D with T = 1) with a text adapter in front: ``LLMAdapter`` (6 blocks of 1024) reads a
Qwen3-0.6B context (1024 wide) and the prompt's T5 token ids (``t5xxl_ids``, with per-token
``t5xxl_weights``) and returns a 1024-wide context of one row per T5 token, zero-padded to 512
rows (0.33.0 comfy/ldm/anima/model.py:198-208). The DiT's forward is Cosmos-Predict2's
(``cosmos_predict2.py`` reads it for host syncs: none but a tensor ``fps``, refused the same way;
the same scratch attributes are stored on the module).

Where the adapter runs, BCG's graph is not involved: under ``torch.inference_mode`` (ComfyUI's
execution) ``model_base.Anima.extra_conds`` (model_base.py:1485-1499) runs it once per
conditioning before sampling; outside it (training) ``Anima.forward`` runs it on every call
(model.py:210-213) before ``MiniTrainDIT.forward`` enters the DIFFUSION_MODEL wrapper, BCG's hook
(predict2.py:839). Either way the DiT call BCG sees takes the adapted context.

Text: prompts of up to 512 T5 tokens reach the DiT as 512 rows (the padding at model.py:204-205),
so they share one graph per size and batch, and under inference mode cond and uncond batch
together; longer prompts keep their length.
"""

import dataclasses

import torch

from . import cosmos_predict2
from .base import WarmupFacts
from .cosmos_predict2 import CosmosPredict2Adapter

#: Cosmos-Predict2's refusal (the same forward, the same host read), named here for the support table.
TENSOR_FPS_REFUSAL = cosmos_predict2.TENSOR_FPS_REFUSAL


@dataclasses.dataclass(frozen=True)
class AnimaAdapter(CosmosPredict2Adapter):
    #: Rows of the adapted context: ``preprocess_text_embeds`` pads shorter outputs to this.
    ADAPTED_MIN_LENGTH = 512

    def text_length_seen(self, tokens: int) -> int:
        return max(self.ADAPTED_MIN_LENGTH, tokens)


ADAPTER = AnimaAdapter(
    family="anima",
    display_name="Anima",
    config_classes=("Anima",),
    max_text_length=1024,
    text_policy=(
        "natural buckets, exact: the LLM adapter's context is padded to 512 rows (longer prompts keep their length)"
    ),
    forward_scratch_attributes=cosmos_predict2.ADAPTER.forward_scratch_attributes,
)


def anima_extras(facts, batch, length, generator, guidance):
    """The Anima text encoder (Qwen3-0.6B context, then ``AnimaTEModel.encode_token_weights``):
    the prompt's T5 token ids (int32, one per token, batch 1 as the encoder returns them) and
    their weights (1.0 each, as the tokenizer writes them); no pooled output."""
    ids = torch.randint(0, 32128, (length,), generator=generator, dtype=torch.int32)
    return {"pooled_output": None, "t5xxl_ids": ids, "t5xxl_weights": torch.ones(length)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=1024,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=16,
    conditioning_extras=anima_extras,
)
