"""ComfyUI glue for the BCG runtime; every ComfyUI import in this package is lazy (inside functions)."""
