"""Wan 2.1 SCAIL-2 (``WAN21_SCAIL2``): the second recipe of the Wan SCAIL family
(``bench/recipes/wan_scail2.py``; ``wan_scail.py`` names what its forward adds and how it is keyed)."""

from . import wan_scail

ADAPTER = wan_scail.ADAPTER  # this recipe's family
FACTS = wan_scail.FACTS
