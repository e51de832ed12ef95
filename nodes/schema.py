"""``io.Schema`` with the node-library metadata this ComfyUI knows.

``search_aliases`` (what the node search also matches: ComfyUI 0.33.0's frontend searches
``name``, ``display_name`` and ``search_aliases``) is a Schema field on ComfyUI 0.33.0 and unknown
to 0.8.0's, where passing it would fail the pack's import; fields the running Schema lacks are
left out.
"""

import dataclasses

from comfy_api.latest import io

#: Where both nodes sit in the node library: beside the model loaders they follow.
CATEGORY = "model/acceleration"
#: What a user types when looking for a speed-up; shared by both nodes.
SEARCH_ALIASES = [
    "cuda graph",
    "cuda graphs",
    "speed",
    "speed up",
    "speedup",
    "accelerate",
    "faster sampling",
    "BCG",
    "breakable cuda graphs",
]

_FIELDS = {f.name for f in dataclasses.fields(io.Schema)}


def schema(**fields) -> io.Schema:
    return io.Schema(**{name: value for name, value in fields.items() if name in _FIELDS})
