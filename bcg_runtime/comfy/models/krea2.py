"""Krea 2 (``supported_models.Krea2``: ``comfy.ldm.krea2.model.SingleStreamDiT``), ComfyUI 0.33.0
only (0.8.0 has no ``comfy.ldm.krea2``: its tests skip there).

The 12.9B single-stream DiT (Krea-2 Raw and Turbo share it): 28 blocks at 6144 (48 query heads
over 12 key/value heads of 128, sigmoid-gated attention, SwiGLU), a 2x2 patch over the Qwen-Image
VAE's 16 channels (``latent_formats.Wan21``: 5-D latents ``[B,16,1,H,W]``, which ``_forward``
folds to 4-D), and a ``txtfusion`` adapter over a 12-layer Qwen3-VL-4B tap (the context arrives
flattened to ``12 * 2560 = 30720`` features). ``model_detection`` reads features, channels,
layers, heads, kvheads, txtlayers and txtdim from the layout; the rest are the constructor's
defaults, which the 12.9B count matches.

Text: ``Krea2TEModel`` strips the template prefix, returns the exact token count and drops an
all-ones mask; ``model_base.Krea2.extra_conds`` never passes a mask and the forward ignores its
``attention_mask``. Text RoPE ids are zeros, so padding would add attended tokens: each prompt
length is its own graph, cond and uncond of different lengths two batch-1 calls.

Read for host syncs and value-dependent branches (0.33.0, ``comfy/ldm/krea2/model.py``):

- l.297-300, l.382-391: ``x.ndim == 5`` and ``_unpack_context``'s width check: shapes only.
- l.310-329 reference latents (edit): the branch needs ``ref_latents_method`` (a string argument,
  in the key) or ``default_ref_method`` (None from detection, fixed at load); token counts and
  ``timestep_zero_index`` (l.328, l.356) are Python ints from ``ref.shape``. Each reference size is
  in the key through ``ref_latents``' shapes and named in the label (``ref WxH``).
  ``reference_image_num_tokens`` and ``img_slice`` are written for patches (options.py).
- l.176-212 ``SingleStreamBlock`` with ``timestep_zero_index``: in-place ops on slices bounded by
  that Python int; device work.
- l.34, l.113, l.124 ``cast_to`` of norm scales and modulation parameters: device casts.
- l.347-351 ``post_input`` patches and l.85/l.100 attention patches: any patch makes the call
  eager (options.py).
- l.283-293 ``process_img``: ``arange`` over sizes from shapes; l.373-380 unpatchify by shapes.

No op syncs with the host, so mode 'full' is safe. ``forward`` (l.276) runs ``_forward``
through the DIFFUSION_MODEL ``WrapperExecutor``.
"""

from typing import Any

from .base import ModelAdapter, WarmupFacts
from .flux import reference_label


class Krea2Adapter(ModelAdapter):
    def label(self, call: dict[str, Any]) -> str:
        """The base label plus each reference latent's size (edit calls)."""
        return super().label(call) + reference_label(call, self.latent_scale)


ADAPTER = Krea2Adapter(
    family="krea2",
    display_name="Krea 2",
    config_classes=("Krea2",),
    max_text_length=1024,
    text_policy="exact length: Qwen3-VL context unpadded and unmasked, each prompt length is its own graph",
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=12 * 2560,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=16,
)
