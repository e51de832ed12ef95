"""Anima (``supported_models.Anima``: ``comfy.ldm.anima.model.Anima``), ComfyUI 0.33.0 (0.8.0 has no
such class).

A Cosmos-Predict2 2B text-to-image DiT behind a text adapter: ``LLMAdapter`` turns a Qwen3-0.6B
context and the prompt's T5 token ids into a 1024-wide context of one row per T5 token,
zero-padded to 512 rows. The DiT's forward is Cosmos-Predict2's (``cosmos_predict2.py``: no host
sync but a tensor ``fps``, refused the same way; the same scratch attributes left out of the
address check), so mode 'full' is safe. The text adapter runs outside BCG's graph: under
``torch.inference_mode`` (ComfyUI's execution) ``extra_conds`` runs it once per conditioning
before sampling; outside it ``Anima.forward`` runs it on every call before the DIFFUSION_MODEL
hook. Either way the DiT call BCG sees takes the adapted context. Text: prompts of up to 512 T5
tokens reach the DiT as 512 rows and share one graph per size and batch (cond and uncond batch
under inference mode); longer prompts keep their length. Source audit: tests/comfy/test_cosmos_variants.py.
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
