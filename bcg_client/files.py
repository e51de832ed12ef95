"""What the client writes and reads on this machine: file names it derives itself (never the
server's), atomic JSON writes, JSON reads with one-line errors, a writable-folder check."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

from .errors import ClientError, write_error

# Saved files are named by the client only: [A-Za-z0-9_-] pieces joined by "_", one known suffix.
# Such a name has no separator, drive, ":" (NTFS streams), leading dot, trailing dot or space, and
# its stem is never a Windows device name, so it stays inside the folder on Linux, macOS and Windows.
NAME_PIECE = 40  # characters kept of a server-given piece (node id, class); a hash keeps it unique


FILE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".tif", ".tiff", ".exr", ".mp4", ".webm", ".mov",
                 ".wav", ".flac", ".mp3", ".ogg", ".glb")  # fmt: skip


WINDOWS_DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"{d}{i}" for d in ("COM", "LPT") for i in range(10))}


def name_piece(text, limit: int = NAME_PIECE) -> str:
    """``text`` as a file-name piece of [A-Za-z0-9_-]; a piece that had to change ends with a hash of it."""
    raw = str(text)
    clean = re.sub(r"[^A-Za-z0-9_-]+", "-", raw).strip("-") or "x"
    if clean != raw or len(clean) > limit:
        clean = f"{clean[: limit - 9]}-{hashlib.sha1(raw.encode()).hexdigest()[:8]}"
    return f"_{clean}" if clean.upper() in WINDOWS_DEVICES else clean


def image_name(stem: str, node_id, class_type, k: int, server_filename) -> str:
    """The file name of a job's ``k``-th image of node ``node_id``: ``<stem>_<class>_n<id>_<k><suffix>``.

    Only the suffix is taken from the server's file name, and only when it is a known one."""
    suffix = Path(str(server_filename).replace("\\", "/")).suffix.lower() or ".png"
    suffix = suffix if suffix in FILE_SUFFIXES else ".bin"
    return f"{name_piece(stem, 80)}_{name_piece(class_type or 'output')}_n{name_piece(node_id)}_{k}{suffix}"


def save_files(files: list[tuple[str, bytes]], out_dir: Path) -> list[Path]:
    """Write (name, bytes) pairs into ``out_dir`` (made if missing); an OSError is the caller's."""
    out_dir.mkdir(parents=True, exist_ok=True)
    saved = []
    for name, data in files:
        path = out_dir / name
        path.write_bytes(data)
        saved.append(path)
    return saved


def write_json(path: Path, data: dict) -> None:
    """Write ``data`` atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    os.replace(tmp, path)


def read_json(path: Path, what: str) -> dict:
    """A JSON object from ``path``; a ClientError saying what is wrong and where."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ClientError(f"{what} {str(path)!r}: cannot read it ({e.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ClientError(f"{what} {str(path)!r} is not JSON ({e}); fix the file") from None
    if not isinstance(data, dict):
        raise ClientError(f"{what} {str(path)!r}: expected a JSON object, found {type(data).__name__}")
    return data


def check_folder(folder: Path, option: str) -> None:
    """Make ``folder`` and write a file in it, or raise the WriteError saying why not and the fix."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise write_error(folder, e, "images", option) from None
