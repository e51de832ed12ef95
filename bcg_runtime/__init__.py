"""ComfyUI-BCG runtime.

``bcg_runtime.core`` is plain torch (no ComfyUI import) and holds the breakable graph runtime;
``bcg_runtime.comfy`` is the ComfyUI glue and imports ComfyUI lazily.
"""

__version__ = "0.2.0"
