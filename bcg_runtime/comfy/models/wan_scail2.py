"""Wan 2.1 SCAIL-2 (``WAN21_SCAIL2``): the second recipe of the Wan SCAIL family (``wan_scail.py``
names what its forward adds and how it is keyed)."""

from . import wan
from .wan import variant_recipe
from .wan_scail import ADAPTER  # this recipe's family

#: Wan's umT5 context and latent (``wan.py``): what the warm-up mirrors of this variant.
FACTS = wan.FACTS

#: SCAIL-2 14B: SCAIL's layout plus the 28-channel identity-mask patch embedding.
RECIPE = variant_recipe(
    ADAPTER,
    "wan_scail2",
    "Wan 2.1 SCAIL-2 14B",
    "WAN21_SCAIL2",
    "WAN21_SCAIL2",
    {"model_type": "scail2", "in_dim": 20},
    ldm_class="comfy.ldm.wan.model:SCAIL2WanModel",
)
