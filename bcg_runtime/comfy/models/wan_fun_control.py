"""Wan 2.1 Fun Control (``WAN21_FunControl2V``; Wan's own ``WanModel`` with 48 input channels).

The control video's latent (and the start image's) reach the DiT as 32 channels concatenated
into ``x`` (``WAN21.concat_cond``, model_base.py l.1614, from ``concat_latent_image``; zeros when
none): shapes in the key, values in the graph's inputs; CLIP-vision features as ``clip_fea``
(model_type ``i2v``). The forward is Wan's (``wan.py`` names its host reads); nothing else.
"""

from . import wan
from .wan import variant

ADAPTER = variant("wan_fun_control", "Wan Fun Control", ("WAN21_FunControl2V",))

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS
