"""PiD, the Pixel Diffusion Decoder (``PiD``; ``comfy.ldm.pixeldit.pid.PidNet``): the PixelDiT
family (``pixeldit.py`` has the adapter and its contract, PiD's LQ branch included) decoding a
FLUX.1 / Qwen-Image latent (16 channels at 8x) to the image at 4x, as PiD v1.5 ships it.

Detection (model_detection.py:528-571) reads the LQ projection: its input channels pick the v1.5
variant (16: Flux and Qwen-Image), its gate count sets ``lq_interval`` as ``(14 + gates - 1) //
gates`` (2 for the real 7 gates of 14 blocks), and ``lq_proj.pit_head`` marks v1.5 (replicate
padding, the PiT-block gate, a 2048-pixel NTK reference). Fewer patch blocks mean fewer gates, for
which the detection's formula gives another interval: :class:`PiDFamilyInfo` says what it gives.
"""

import dataclasses

import torch

from . import pixeldit

ADAPTER = pixeldit.ADAPTER


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
