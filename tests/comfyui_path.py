"""Where the comfy and e2e layers find ComfyUI.

``$COMFYUI_PATH`` when it is set (taken as given: a wrong one is reported by the layer that uses
it), else the ComfyUI this pack is installed in: the pack sits in ``ComfyUI/custom_nodes/<pack>``,
so two folders up holds ``main.py`` and ``comfy/`` (the benchmark looks there too). Standard
library only: the top-level ``tests/conftest.py`` imports it before torch or ComfyUI.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

PACK_ROOT = Path(os.path.abspath(__file__)).parent.parent


def is_comfyui(path: str | os.PathLike) -> bool:
    """A ComfyUI checkout: ``main.py`` beside the ``comfy/`` package."""
    path = Path(path)
    return (path / "main.py").is_file() and (path / "comfy").is_dir()


def _logical_roots(pack_root: Path, pwd: str | None) -> list[Path]:
    """The pack's folder as the shell named it: Python's working directory has its links resolved,
    so a pack linked into ``custom_nodes`` shows up only in ``$PWD`` (at the pack or below it)."""
    if not pwd:
        return []
    real = pack_root.resolve()
    path = Path(pwd)
    for candidate in [path, *path.parents]:
        if candidate.resolve() == real:
            return [candidate]
    return []


def find_comfyui(environ: Mapping[str, str] | None = None, pack_root: str | os.PathLike = PACK_ROOT) -> str | None:
    """``$COMFYUI_PATH``, else the ComfyUI two folders above the pack, else None.

    The pack's folder is tried as given, as ``$PWD`` names it and with links resolved, so a pack
    cloned into ``custom_nodes`` and one linked there are both found.
    """
    environ = os.environ if environ is None else environ
    explicit = environ.get("COMFYUI_PATH")
    if explicit:
        return explicit
    given = Path(os.path.abspath(pack_root))
    for root in dict.fromkeys([given, *_logical_roots(given, environ.get("PWD")), given.resolve()]):
        candidate = root.parent.parent
        if root.parent.name and is_comfyui(candidate):
            return str(candidate)
    return None
