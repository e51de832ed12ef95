"""Wan 2.2 Fun Camera (``WAN22_Camera``): the second recipe of the Wan Fun Camera family
(``bench/recipes/wan22_camera.py``; ``wan_camera.py`` names what its forward adds and how it is keyed)."""

from . import wan_camera

ADAPTER = wan_camera.ADAPTER  # this recipe's family
FACTS = wan_camera.FACTS
