"""Cosmos-Predict2 Video2World (``supported_models.CosmosI2VPredict2``: ``MiniTrainDIT`` with 17
input channels), in ComfyUI 0.8.0 and 0.33.0.

Cosmos-Predict2's adapter (``cosmos_predict2.py``: forward, text rule, the tensor-``fps`` refusal)
for a video model (labels count pixel frames, 4k+1), with its own family name so it stays off
until its own GPU test passed. The inverted noise mask (``mask_inverted``) is a channel of ``x``
built before the call, and the start / end frames are in the latent the sampler mixes; the
``denoise_mask`` makes ``process_timestep`` send per-frame timesteps ``[B, T]``, their shape in the
key. Without a start image the call has no noise mask and ``[B]`` timesteps: another signature.
Nothing else is keyed; as for Cosmos-Predict2, no op syncs with the host, so mode 'full' is safe.
Source audit: tests/comfy/test_cosmos_variants.py.
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
