#!/usr/bin/env python3
"""Run a BCG job spec on a Ray cluster, one actor per ComfyUI server and one Ray task per job: the
``bcg_client.on_ray`` package's command line (``--help`` documents it; ``python -m
bcg_client.on_ray`` from the pack's folder is the same). Needs ``pip install ray``."""

import sys
from pathlib import Path

if __name__ == "__main__":
    # This folder would shadow the package bcg_client (scripts/bcg_client.py): the pack's folder takes its place.
    sys.path[0] = str(Path(__file__).resolve().parents[1])
    from bcg_client.on_ray import local_ray_on_loopback

    local_ray_on_loopback(sys.argv[1:])
    try:
        import ray  # noqa: F401
    except ImportError:
        sys.exit(
            "error: the Ray runner needs ray: pip install ray (for one server, scripts/bcg_client.py needs nothing)"
        )
    from bcg_client.on_ray.cli import main

    sys.exit(main())
