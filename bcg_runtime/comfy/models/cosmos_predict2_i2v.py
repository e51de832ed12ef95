"""Cosmos-Predict2 Video2World (``supported_models.CosmosI2VPredict2``: ``MiniTrainDIT`` with 17
input channels), in ComfyUI 0.8.0 and 0.33.0.

The Cosmos-Predict2 forward and text policy (``cosmos_predict2.py`` reads it for host syncs: none
but a tensor ``fps``, refused the same way); this adapter is Cosmos-Predict2's for a video model
(labels count pixel frames, 4k+1), with its own family name so it stays off until its own GPU test
passed. What the class adds (0.33.0 comfy/supported_models.py:1163-1171,
comfy/model_base.py:1439-1465):

- ``concat_keys`` ``("mask_inverted",)``: the inverted noise mask (``CosmosPredict2ImageToVideoLatent``:
  zeros on the given start / end frames) is a channel of ``x``, built before the call; the frames
  themselves are in the latent, which the sampler mixes in.
- ``denoise_mask`` (the noise mask, a tensor argument of ``_forward`` it does not read) makes
  ``process_timestep`` (model_base.py:1459-1467) send per-frame timesteps ``[B, T]``, zero on the
  given frames: ``predict2.py:879`` branches on ``timesteps.ndim``, a shape in the key.

Without a start image the node returns a latent with no noise mask: 17 channels all the same
(``mask_inverted`` zeros) and ``[B]`` timesteps, another signature.
"""

import dataclasses

from . import cosmos_predict2

#: Cosmos-Predict2's refusal (the same forward, the same host read), named here for the support table.
TENSOR_FPS_REFUSAL = cosmos_predict2.TENSOR_FPS_REFUSAL


ADAPTER = dataclasses.replace(
    cosmos_predict2.ADAPTER,
    family="cosmos_predict2_i2v",
    display_name="Cosmos-Predict2 Video2World",
    config_classes=("CosmosI2VPredict2",),
    temporal_scale=4,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = cosmos_predict2.FACTS
