"""Third-party node packs (ComfyUI-GGUF, ComfyUI-KJNodes) for tests and benchmarks, imported the
way ComfyUI imports them: by its own custom-node loader, from ``$BCG_PACKS_PATH`` (default
``.comfyui/packs`` in this repository, one folder per pack; docs/testing.md says how to fetch them)."""

from __future__ import annotations

import asyncio
import os
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[1]


def packs_path() -> pathlib.Path:
    return pathlib.Path(os.environ.get("BCG_PACKS_PATH", REPO / ".comfyui" / "packs"))


def pack_dir(name: str) -> pathlib.Path | None:
    """The pack's folder, or None where it is absent."""
    path = packs_path() / name
    return path if (path / "__init__.py").is_file() else None


def load(name: str) -> dict:
    """Import pack ``name`` once through ``nodes.load_custom_node`` (a pack ComfyUI's loader already
    imported from that folder is not imported again) and return ComfyUI's node class mappings."""
    import nodes

    path = pack_dir(name)
    if path is None:
        raise FileNotFoundError(f"{name} not found under {packs_path()} (BCG_PACKS_PATH; docs/testing.md)")
    if os.path.abspath(path) not in nodes.LOADED_MODULE_DIRS.values():
        if not asyncio.run(nodes.load_custom_node(str(path), module_parent="custom_nodes")):
            raise RuntimeError(f"{name} failed to load from {path}")
    return nodes.NODE_CLASS_MAPPINGS
