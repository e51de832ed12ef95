"""PiD v1.5 (FLUX.1 / Qwen-Image latents): the synthetic-checkpoint recipe ``pixeldit_pid`` (a tool). The adapter
and warm-up facts it reads are ``bcg_runtime/comfy/models/pixeldit_pid.py``'s, which never imports this."""

import dataclasses
from dataclasses import dataclass

from bcg_runtime.comfy.models.pixeldit_pid import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config
from . import pixeldit

#: PiD's real LQ interval: a gate before every second patch block.
LQ_INTERVAL = 2


@dataclass(frozen=True)
class PiDFamilyInfo(FamilyInfo):
    """``lq_interval`` as the detection derives it from the gate count (model_detection.py:540):
    ``ceil(patch_depth / 2)`` gates at the real interval give 2 at the real 14 blocks, 14 for one."""

    def unet_config(self, depth=None) -> dict:
        cfg = super().unet_config(depth)
        gates = -(-cfg["patch_depth"] // LQ_INTERVAL)
        return {**cfg, "lq_interval": (14 + gates - 1) // gates}


#: PiD v1.5 for FLUX.1 / Qwen-Image latents on the PixelDiT T2I body (the class's defaults): LQ
#: projection 512 wide with 4 residual blocks, 7 gates and the PiT-block gate.
RECIPE = PiDFamilyInfo(
    **{
        **{f.name: getattr(pixeldit.RECIPE, f.name) for f in dataclasses.fields(FamilyInfo)},
        "adapter": ADAPTER,
        "name": "pixeldit_pid",
        "title": "PiD v1.5 (FLUX.1 / Qwen-Image latents)",
        "ldm_class": "comfy.ldm.pixeldit.pid:PidNet",
        "supported_model": "PiD",
        "model_base": "PiD",
        "config": frozen_config(
            {
                "image_model": "pid",
                "lq_hidden_dim": 512,
                "lq_interval": LQ_INTERVAL,
                "lq_latent_channels": 16,
                "latent_spatial_down_factor": 8,
                "lq_latent_unpatchify_factor": 1,
                "lq_conv_padding_mode": "replicate",
                "lq_gate_per_token": False,
                "pit_lq_inject": True,
                "rope_ref_h": 2048,
                "rope_ref_w": 2048,
            }
        ),
        # PiD files carry no ``core.`` prefix (detection reads ``lq_proj.latent_proj.0.weight``);
        # the fused pixel-block modulation is the same.
        "checkpoint_layout": pixeldit.released_layout(""),
        "facts": FACTS,
    }
)
