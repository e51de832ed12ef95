"""CogVideoX inpainting (``CogVideoX_Inpaint``, CogVideoX-Fun V1.5 InP): the CogVideoX family
(``cogvideox.py`` has its adapter and its contract) with the masked video's and the mask's
latents as 32 more input channels of ``x`` (``model_base.CogVideoX.concat_cond``,
model_base.py:2798-2837), the concatenated ``x`` being the DiT's argument (values copied into the
graph's inputs at every replay). CogVideoX 1.5 patches 2x2x2 with a Linear (``patch_size_t`` 2,
model_detection.py:664-667) and its RoPE grid is sliced from its 170x96 training grid
(``_get_rotary_emb``, cogvideo/model.py:535-546, shapes only; the class sets the sizes,
supported_models.py:2457-2461).
"""

from . import cogvideox

ADAPTER = cogvideox.ADAPTER

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = cogvideox.FACTS
