"""``python -m bcg_client.on_ray ...``: the same as ``python scripts/bcg_ray.py ...``."""

import sys

from . import local_ray_on_loopback

local_ray_on_loopback(sys.argv[1:])
from .cli import main  # noqa: E402  (after the environment Ray reads on import)

sys.exit(main())
