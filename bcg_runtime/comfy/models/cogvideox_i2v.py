"""CogVideoX image-to-video (``CogVideoX_I2V``): the CogVideoX family (``cogvideox.py`` has its
adapter and reads the forward) with the start image's latent as 16 more input channels of ``x``
(``model_base.CogVideoX.concat_cond``, model_base.py:2798-2837: ``concat_latent_image`` scaled by
the latent format, resized to the noise and padded or cut to its frame count; zeros without one).
The concatenated ``x`` is the DiT's argument, so the image's values are copied into the graph's
inputs at every replay. CogVideoX-5B-I2V carries a learned positional table
(``patch_embed.pos_embedding``, detection model_detection.py:678-681), sliced by the patch count.
"""

import dataclasses

from . import cogvideox
from .recipe import frozen_config

ADAPTER = cogvideox.ADAPTER

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = cogvideox.FACTS

#: CogVideoX-5B-I2V: 32 input channels and the learned positional table of its 49-frame 720x480
#: training size (226 text rows + 13 x 30 x 45 patches).
RECIPE = dataclasses.replace(
    cogvideox.RECIPE,
    adapter=ADAPTER,
    facts=FACTS,
    name="cogvideox_i2v",
    title="CogVideoX-5B-I2V",
    supported_model="CogVideoX_I2V",
    config=frozen_config(
        {
            **cogvideox.RECIPE.config,
            "in_channels": 32,
            "use_learned_positional_embeddings": True,
            "use_rotary_positional_embeddings": False,
        }
    ),
)
