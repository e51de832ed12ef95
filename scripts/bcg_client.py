#!/usr/bin/env python3
"""Run batches of prompts on ComfyUI servers and report what BCG replayed: the ``bcg_client``
package's command line (``--help`` documents it; ``python -m bcg_client`` from the pack's folder is
the same). Standard library only."""

import sys
from pathlib import Path

if __name__ == "__main__":
    # This folder would shadow the package of the same name: the pack's folder takes its place.
    sys.path[0] = str(Path(__file__).resolve().parents[1])
    from bcg_client.cli import main

    sys.exit(main())
