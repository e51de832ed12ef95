"""``python -m bcg_client ...``: the same as ``python scripts/bcg_client.py ...``."""

import sys

from .cli import main

sys.exit(main())
