"""PiD, the Pixel Diffusion Decoder (``PiD``; ``comfy.ldm.pixeldit.pid.PidNet``): the PixelDiT
family (``pixeldit.py`` has the adapter and reads the forward, PiD's LQ branch included) decoding a
FLUX.1 / Qwen-Image latent (16 channels at 8x) to the image at 4x, as PiD v1.5 ships it.

Detection (model_detection.py:528-571) reads the LQ projection: its input channels pick the v1.5
variant (16: Flux and Qwen-Image), its gate count sets ``lq_interval`` as ``(14 + gates - 1) //
gates`` (2 for the real 7 gates of 14 blocks), and ``lq_proj.pit_head`` marks v1.5 (replicate
padding, the PiT-block gate, a 2048-pixel NTK reference). Fewer patch blocks mean fewer gates, for
which the detection's formula gives another interval: :class:`PiDFamilyInfo` says what it gives.
"""

import dataclasses
from dataclasses import dataclass

import torch

from . import pixeldit
from .recipe import FamilyInfo, frozen_config

ADAPTER = pixeldit.ADAPTER

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


#: LQ latent cells a side of the placeholder conditioning: a 256² image's FLUX.1 latent (PiD
#: resizes the LQ latent to the patch grid of any output size, pid.py:130-134).
LQ_CELLS = 32


def _pid_extras(facts, batch, length, generator, guidance):
    """The PixelDiT encoder's extras plus what PiDConditioning adds to the positive
    (nodes_pid.py:48-50): ``lq_latent`` (here ``N(0, 1)``, ``[batch, 16, 32, 32]``) and
    ``degrade_sigma`` (``[1]``, the node's default 0.0). PiD's forward raises without them."""
    extras = pixeldit.FACTS.extras(batch, length, generator, guidance)
    lq = torch.randn(batch, 16, LQ_CELLS, LQ_CELLS, generator=generator, dtype=torch.float32)
    return {**extras, "lq_latent": lq, "degrade_sigma": torch.tensor([0.0], dtype=torch.float32)}


#: PixelDiT's facts with the conditioning PiD's forward needs besides (``_pid_extras``).
FACTS = dataclasses.replace(pixeldit.FACTS, conditioning_extras=_pid_extras)

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
