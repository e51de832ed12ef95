"""HunyuanVideo 1.5 super-resolution (``supported_models.HunyuanVideo15_SR_Distilled``: the
HunyuanVideo 1.5 model with 98 input channels), in ComfyUI 0.8.0 and 0.33.0.

HunyuanVideo 1.5's adapter (``hunyuan_video15.py``: forward, text rule, meanflow rule) with its own
family name (off until its own GPU test passed) and refusal text. The SR node's ``concat_cond``
(66 channels of ``x`` beside the latent's 32: the upscaled low-resolution latent, zeros without
one) is built before the call: shapes in the key, values copied at replay. ComfyUI sends
``disable_time_r`` False, so a checkpoint with ``time_r_in`` (a meanflow distillation, read from
the loaded model) takes the ``torch.where`` over the sampler's schedule on every call, which
:data:`MEANFLOW_REFUSAL` sends eager. Whether the released SR checkpoints carry ``time_r_in`` was
not read here (no checkpoint in reach; ComfyUI's explicit False suggests they do): if they do,
every call of theirs runs eager with that reason, equal to stock ComfyUI. Source audit:
tests/comfy/test_hunyuan_variants.py.
"""

import dataclasses
from typing import Any

from . import hunyuan_video15

MEANFLOW_REFUSAL = (
    "HunyuanVideo 1.5 SR meanflow (time_r_in) checkpoint: ComfyUI sends disable_time_r=False, so the forward finds "
    "the next sigma with torch.where over the sampler's schedule (a host sync and a branch on its values), which a "
    "graph would freeze; running eager"
)


class HunyuanVideo15SRAdapter(hunyuan_video15.HunyuanVideo15Adapter):
    """HunyuanVideo 1.5's adapter with this class's refusal text."""

    def refusal(self, call: dict[str, Any]) -> str | None:
        return MEANFLOW_REFUSAL if super().refusal(call) else None


ADAPTER = HunyuanVideo15SRAdapter(
    **{
        **{f.name: getattr(hunyuan_video15.ADAPTER, f.name) for f in dataclasses.fields(hunyuan_video15.ADAPTER)},
        "family": "hunyuan_video15_sr",
        "display_name": "HunyuanVideo 1.5 SR",
        "config_classes": ("HunyuanVideo15_SR_Distilled",),
    }
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = hunyuan_video15.FACTS
