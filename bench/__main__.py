"""``python -m bench``: the benchmark (:mod:`bench.cli`)."""

import sys

from .cli import main

sys.exit(main())
