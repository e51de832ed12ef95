"""JoyImage (``JoyImage``; ``comfy.ldm.joyimage.model.JoyImageTransformer3DModel``,
``model_base.JoyImage``), ComfyUI 0.33.0 only (0.8.0 has no such class: its tests skip there).

A double-stream DiT (24 heads of 128, 3072 wide) over the Wan 2.1 latent (16 channels at 8x, 5-D
``[B,16,1,H,W]`` for an image) in 1x2x2 patches, with a Qwen3-VL-8B context (4096). Edit calls
carry ``ref_latents`` (``model_base.JoyImage.extra_conds``, model_base.py:2524-2526): their
tokens follow the target's, each with its own temporal RoPE band. Each reference's shape is in
the key, its values are copied into the graph's inputs at every replay, and the label names its
size (``ref WxH``). The DiT's first argument is ``hidden_states`` (not ``x``), which the label
reads.

Text: the Qwen3-VL tokenizer does not pad and no mask reaches the DiT: every prompt length is its
own graph.

Read for host syncs and value-dependent branches (0.33.0, comfy/ldm/joyimage/model.py):

- ``_get_rotary_pos_embed_for_range`` / ``get_rotary_pos_embed_for_components`` (l.315-355):
  ``arange`` on the device from Python ints (the components' patch grids: shapes).
- ``_forward`` (l.382-454): a Python loop over ``[hidden_states, *ref_latents]`` (the list's
  length in the key), ``pad_to_patch_size`` and the target's token count from shapes.
- ``JoyImageAttention`` (l.78-131): q/k RMSNorm and RoPE in one ``comfy_kitchen.rms_rope`` op, a
  kernel launched on the current stream (captured like any other); ``cast_bias_weight`` /
  ``uncast_bias_weight`` cast the norm weights (no offload stream outside lowvram, which BCG
  refuses).
- No ``.item()``, ``.tolist()``, ``.cpu()`` or mask indexing, so mode 'full' is safe.
  ``JoyImageTransformer3DModel.forward`` (l.365) runs ``_forward`` through the DIFFUSION_MODEL
  ``WrapperExecutor``.
"""

from typing import Any

from .base import ModelAdapter, WarmupFacts
from .flux import reference_label


class JoyImageAdapter(ModelAdapter):
    def label(self, call: dict[str, Any]) -> str:
        """The base label of ``hidden_states`` (the DiT's latent argument) plus each reference
        latent's size (edit calls)."""
        return super().label({**call, "x": call.get("hidden_states")}) + reference_label(call, self.latent_scale)


ADAPTER = JoyImageAdapter(
    family="joyimage",
    display_name="JoyImage",
    config_classes=("JoyImage",),
    max_text_length=1024,
    text_policy="exact length: the Qwen3-VL encoder does not pad, each prompt length is its own graph",
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=4096,
    pooled_dim=None,
    default_cond_length=40,
    latent_channels=16,
)
