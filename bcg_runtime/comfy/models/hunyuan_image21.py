"""HunyuanImage 2.1 (``supported_models.HunyuanImage21``: ``comfy.ldm.hunyuan_video.model.HunyuanVideo``
with a 2-D patch), in ComfyUI 0.8.0 and 0.33.0.

The 17B DiT: hidden 3584, 28 heads of 128, 20 double- and 40 single-stream blocks, a 1x1 patch
over 64-channel latents of a 32x VAE (``latent_formats.HunyuanImage21``: a 2048² image is 64x64
= 4096 tokens), 2-D RoPE (``axes_dim`` [64, 64], ``img_ids_2d``), Qwen2.5-VL-7B context (3584) and
a byT5 glyph mapper. The distilled checkpoint adds ``guidance_in`` and ``time_r_in`` (meanflow).
The same forward as HunyuanVideo 1.5 (``hunyuan_video15.py``), whose adapter this one extends;
the refiner (``HunyuanImage21Refiner``, 3-D patch) has its own adapter in
``hunyuan_image21_refiner.py`` (its recipe in ``bench/recipes/``).

Text: ``HunyuanImageTokenizer`` is Qwen-Image's (exact token count after the template, an
all-ones mask dropped), so each prompt length is its own graph; text RoPE ids are zeros, so
padding would add unmasked tokens. A mask reaches the DiT only from a padded batch of prompts
(``model_base.HunyuanImage21.extra_conds``, 0.33 l.2588: ``numel != sum``, once per conditioning,
before sampling): then a tensor argument (shape in the key, values copied at replay).

Read for host syncs and value-dependent branches (0.33.0, comfy/ldm/hunyuan_video/model.py; 0.8.0
has the same lines for everything below):

- l.315-321, meanflow (distilled) checkpoints unless ``disable_time_r``: ``torch.where`` with one
  argument over ``transformer_options['sample_sigmas']`` (a host sync), ``len(w) > 0`` (a Python
  branch on its values) and ``sample_sigmas[w[0] + 1]``: a graph would freeze the r-timestep of
  its capture, so :meth:`refusal` sends such calls eager with the reason.
- l.347-349: ``guidance_embed`` is a fixed config; ``extra_conds`` (l.2598) always sends
  ``guidance`` (6.0 unless set), a tensor argument whose values are copied at replay (unused by the
  base checkpoint). l.351 ``torch.is_floating_point(txt_mask)``: the dtype, in the key.
- l.361 ``txt_byt5`` (quoted text in the prompt): presence and token count in the key (the
  label shows ``byt5:N``). l.323 ``ref_latent``, l.331 ``guiding_frame_index``, l.372
  ``clip_fea``: presence of arguments, in the key (HunyuanImage 2.1's conditioning sends none).
- l.393-437: block bookkeeping in ``transformer_options`` (options.py); ``patches_replace`` makes
  the call eager; l.409/l.430 ``control`` (ControlNet) is an argument.
- l.447-457 unpatchify by ``initial_shape``; l.471-478 ``img_ids_2d``: ``linspace`` over Python
  numbers from shapes.

So mode 'full' is safe for every call not refused. ``HunyuanVideo.forward`` runs ``_forward``
through the DIFFUSION_MODEL ``WrapperExecutor`` (0.33.0 l.481, 0.8.0 l.480).
"""

from typing import Any

from .base import WarmupFacts
from .hunyuan_video15 import HunyuanVideo15Adapter

MEANFLOW_REFUSAL = (
    "HunyuanImage 2.1 distilled (meanflow, time_r_in) checkpoint: the forward finds the next sigma "
    "with torch.where over the sampler's schedule (a host sync and a branch on its values), which a "
    "graph would freeze; running eager"
)


class HunyuanImage21Adapter(HunyuanVideo15Adapter):
    """HunyuanVideo 1.5's adapter (meanflow found per model, byT5 tokens in the label) with this
    family's refusal text."""

    def refusal(self, call: dict[str, Any]) -> str | None:
        return MEANFLOW_REFUSAL if super().refusal(call) else None


ADAPTER = HunyuanImage21Adapter(
    family="hunyuan_image21",
    display_name="HunyuanImage 2.1",
    config_classes=("HunyuanImage21",),
    max_text_length=1024,
    text_policy="exact length: Qwen2.5-VL context unpadded and unmasked, each prompt length is its own graph",
    latent_scale=32,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=3584,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=64,
)
