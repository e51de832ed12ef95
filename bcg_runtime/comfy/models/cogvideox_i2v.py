"""CogVideoX image-to-video (``CogVideoX_I2V``): the CogVideoX family (``cogvideox.py`` has its
adapter and its contract) with the start image's latent as 16 more input channels of ``x``
(``model_base.CogVideoX.concat_cond``, model_base.py:2798-2837: ``concat_latent_image`` scaled by
the latent format, resized to the noise and padded or cut to its frame count; zeros without one).
The concatenated ``x`` is the DiT's argument, so the image's values are copied into the graph's
inputs at every replay. CogVideoX-5B-I2V carries a learned positional table
(``patch_embed.pos_embedding``, detection model_detection.py:678-681), sliced by the patch count.
"""

from . import cogvideox

ADAPTER = cogvideox.ADAPTER

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = cogvideox.FACTS
