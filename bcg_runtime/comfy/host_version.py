"""The ComfyUI versions this pack was tested on, and one log line when the host is newer.

``pyproject.toml`` says ``requires-comfyui = ">=0.8.0"``: ComfyUI-Manager then marks no newer
release incompatible, and a newer host loads the pack as usual. What a newer host changes under the
pack (docs/compatibility.md) is met at run time, where it always was: an unknown
``transformer_options`` entry or hook makes the call eager with the reason, and no capture serves
before its replay was ``torch.equal`` to eager. This module only says, once, that the host is
newer than what was tested. It imports nothing from ComfyUI at import time.
"""

from __future__ import annotations

import logging

#: The ComfyUI releases the pack's comfy layer and GPU suite ran on (README, Requirements).
TESTED_COMFYUI = ("0.8.0", "0.33.0")
LOGGER_NAME = __name__

_reported = False


def parse_version(text: object) -> tuple[int, ...] | None:
    """``"0.38.1"`` -> ``(0, 38, 1)``; the leading dotted numbers of a version string, or None.

    A suffix after the numbers (``"0.38.1+cu130"``, ``"0.35.0rc1"``, ``"0.34.0-dev"``) is
    ignored, and so is a leading ``v``; anything without a leading number gives None."""
    if not isinstance(text, str):
        return None
    text = text.strip()
    if text[:1] in ("v", "V"):
        text = text[1:]
    parts: list[int] = []
    for piece in text.split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) < len(piece):  # a suffix ends the number
            break
    return tuple(parts) or None


def _padded(version: tuple[int, ...], width: int) -> tuple[int, ...]:
    return version + (0,) * (width - len(version))


def newest_tested() -> str:
    """The newest entry of :data:`TESTED_COMFYUI`."""
    return max(TESTED_COMFYUI, key=lambda v: _padded(parse_version(v) or (), 4))


def is_newer_than_tested(version: object) -> bool | None:
    """Whether ``version`` is newer than the newest tested ComfyUI; None when it cannot be read."""
    parsed = parse_version(version)
    if parsed is None:
        return None
    newest = parse_version(newest_tested()) or ()
    width = max(len(parsed), len(newest))
    return _padded(parsed, width) > _padded(newest, width)


def newer_host_message(version: str) -> str:
    return (
        f"[BCG] ComfyUI {version} is newer than the newest version this pack was tested on ({newest_tested()}): "
        "every capture is still proven bit-equal before it serves; see docs/compatibility.md"
    )


def report_host(version: object, log: logging.Logger | None = None) -> str | None:
    """Log one INFO line when ``version`` is newer than the newest tested ComfyUI; returns it.

    Nothing is logged on a tested (or older) host, and nothing but a debug line when the version
    is missing or unreadable."""
    log = log or logging.getLogger(LOGGER_NAME)
    newer = is_newer_than_tested(version)
    if newer is None:
        log.debug(
            "[BCG] the running ComfyUI's version could not be read (%r); tested on %s",
            version,
            ", ".join(TESTED_COMFYUI),
        )
        return None
    if not newer:
        return None
    message = newer_host_message(str(version).strip())
    log.info(message)
    return message


def running_comfyui_version() -> str | None:
    """``comfyui_version.__version__`` of the running ComfyUI, or None where there is none."""
    try:
        from comfyui_version import __version__
    except Exception:  # not inside ComfyUI, or a build without the file
        return None
    return __version__ if isinstance(__version__, str) else None


def report_running_host() -> str | None:
    """:func:`report_host` for the running ComfyUI, once per process (the pack's load path calls it)."""
    global _reported
    if _reported:
        return None
    _reported = True
    return report_host(running_comfyui_version())
