"""Qwen-Image, Qwen-Image-2512 and Qwen-Image-Edit (2509, 2511)
(``comfy.ldm.qwen_image.model.QwenImageTransformer2DModel``).

The text context arrives at its exact token count with no mask (ComfyUI 0.8.0 drops an all-ones
mask), and text RoPE positions start after the image grid, so padding would add unmasked tokens:
each exact length is its own graph. Cond and uncond of different lengths run as two batch-1 calls,
each replaying its own graph.

Qwen-Image-Edit is the same class, called with ``ref_latents``: the list that
``model_base.QwenImage.extra_conds`` builds from the conditioning's ``reference_latents``
(TextEncodeQwenImageEdit / TextEncodeQwenImageEditPlus, ReferenceLatent), each ``[B, 16, 1, h, w]``.
The list is an ordinary argument of the call: each reference's shape, stride and dtype is in the
key and its values are copied into the graph's static inputs at every replay, so a new image of
a known size replays and a new size is a new signature, labelled ``ref WxH[+WxH...]``.
Edit (2509) checkpoints have Qwen-Image's layout and config; Edit-2511 adds one empty buffer,
``__index_timestep_zero__``, from which detection sets ``default_ref_method="index_timestep_zero"``
(the buffer is part of the address state like every buffer). The reference path, read for host
syncs in 0.33.0 (``comfy/ldm/qwen_image/model.py``), has none:

- model.py:459-491: a Python loop over the list (its length is in the key) whose RoPE ``index``
  and offsets come from ``ref.shape`` only; the branch is chosen by ``ref_latents_method``, a
  string argument whose value is in the key, or else ``self.default_ref_method``, fixed at load
  from the checkpoint layout (or an object patch: in the address state). ``process_img``
  (model.py:403-427) builds position ids with ``torch.linspace`` over Python numbers from shapes.
- model.py:492-495 (2511, "index_timestep_zero"): ``timestep`` concatenated with ``timestep * 0``
  on the device; ``timestep_zero_index`` is the image token count, a Python int from the shape,
  by which ``_apply_gate`` / ``_modulate`` (model.py:250-266) slice; the block (l.282) and the
  output (l.561) take the first half of the doubled ``temb`` by ``chunk``: shapes only.
- model.py:497: ``transformer_options["reference_image_num_tokens"]`` is written for patches
  (bookkeeping in options.py).
"""

from typing import Any

from .base import ModelAdapter, WarmupFacts
from .flux import reference_label


class QwenImageAdapter(ModelAdapter):
    def label(self, call: dict[str, Any]) -> str:
        return super().label(call) + reference_label(call, self.latent_scale)


ADAPTER = QwenImageAdapter(
    family="qwen_image",
    display_name="Qwen-Image",  # Qwen-Image-Edit included: same class
    config_classes=("QwenImage",),
    max_text_length=1024,
    text_policy="exact length: unmasked text attention, each prompt length is its own graph",
    padded_text_rows_exact=False,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=3584,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=16,
)
