"""``bench.server --profile`` links this folder into the server's custom_nodes: no nodes, only the
profiling wrapper around ``comfy.sample.sample`` (``bench/server_profile.py``). Tool code: the
pack never loads it."""

import sys
from pathlib import Path

_PACK_ROOT = str(Path(__file__).resolve().parents[2])  # bench/server_profile_node/ -> the checkout
if _PACK_ROOT not in sys.path:
    sys.path.append(_PACK_ROOT)

from bench import server_profile  # noqa: E402

server_profile.install_in_server()

NODE_CLASS_MAPPINGS: dict = {}
