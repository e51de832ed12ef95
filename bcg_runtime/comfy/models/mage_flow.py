"""Mage-Flow (``MageFlow``; ``comfy.ldm.mage_flow.model.MageFlowTransformer2DModel``,
``model_base.MageFlow``, a ``QwenImage`` model base), ComfyUI 0.33.0 only (0.8.0 has no such class:
its tests skip there).

A 12-block Qwen-Image double-stream DiT (24 heads of 128, 3072 wide) with patch size 1 over the
FLUX.2 latent (128 channels at 16x: one token per latent cell), a Qwen3-VL-4B context (2560), and
unrotated text tokens. Edit calls carry ``ref_latents`` (the ReferenceLatent node's
``reference_latents``, ``model_base.QwenImage.extra_conds`` l.2480-2485): each reference's shape
is in the key, its values are copied into the graph's inputs at every replay, and the label names
its size (``ref WxH``).

Text: the Qwen3-VL tokenizer does not pad; the encoder drops its mask when nothing is masked
(``comfy/text_encoders/mage_flow.py:82-84``): every prompt length is its own graph.

Read for host syncs and value-dependent branches (0.33.0, comfy/ldm/mage_flow/model.py):

- ``MageTimestepProjEmbeddings.forward`` (l.24-32): the frequency table is an ``arange`` on the
  timestep's device; ``model_base.MageFlow.process_timestep`` casts the timestep to bf16 (a
  device op).
- ``process_img`` (l.82-92): position ids from ``arange`` on the device and Python ints from the
  shape; the reference loop (l.108-117) runs over the list (its length in the key) and writes
  ``transformer_options["reference_image_num_tokens"]`` (bookkeeping in options.py).
- l.102-103: an integer attention mask becomes an additive float mask on the device.
- ``QwenImageTransformerBlock`` (comfy/ldm/qwen_image/model.py) is Qwen-Image's block, served by
  the Qwen-Image adapter. ``control`` adds ControlNet outputs in place into the token tensor the
  forward made (l.170-175): a tensor argument like any other.
- No ``.item()``, ``.tolist()``, ``.cpu()`` or mask indexing, so mode 'full' is safe.
  ``MageFlowTransformer2DModel.forward`` (l.94) runs ``_forward`` through the DIFFUSION_MODEL
  ``WrapperExecutor``.
"""

from typing import Any

from .base import ModelAdapter, WarmupFacts
from .flux import reference_label


class MageFlowAdapter(ModelAdapter):
    def label(self, call: dict[str, Any]) -> str:
        """The base label plus each reference latent's size (edit calls)."""
        return super().label(call) + reference_label(call, self.latent_scale)


ADAPTER = MageFlowAdapter(
    family="mage_flow",
    display_name="Mage-Flow",
    config_classes=("MageFlow",),
    max_text_length=1024,
    text_policy="exact length: the Qwen3-VL encoder does not pad, each prompt length is its own graph",
    latent_scale=16,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=2560,
    pooled_dim=None,
    default_cond_length=40,
    latent_channels=128,
)
