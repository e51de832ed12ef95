"""Tell the browser what happened: one ``bcg.status`` event per sampling run and warm-up, and one
``bcg.input_error`` event when a BCG node stops on an input it cannot use.

The frontend extension (``web/bcg.js``) listens with ``api.addEventListener(...)`` and finds the
nodes by id. Without a running server (tests, scripts, a headless batch) this is a no-op, and it
never imports ComfyUI's ``server`` module to find out: a process that serves has imported it, and
importing it where none serves costs seconds (its database and frontend modules) on a run's first
report.
"""

from __future__ import annotations

import logging
import math
import sys
from typing import Any

log = logging.getLogger(__name__)
EVENT = "bcg.status"
INPUT_ERROR_EVENT = "bcg.input_error"


def jsonable(value: Any) -> Any:
    """``value`` with every non-finite float replaced by its name ("inf", "nan").

    Python's ``json`` writes ``Infinity``/``NaN``, which the browser's JSON parser rejects (a
    replay that differs in shape reports ``max_abs_diff = inf``).
    """
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def publish_input_error(node_id: str | None, message: str, field: str | None) -> None:
    """Send ``{"node_id", "message", "field"}`` as a ``bcg.input_error`` event: the badge of that
    node then names the input to fix."""
    send(
        INPUT_ERROR_EVENT,
        lambda: {"node_id": None if node_id is None else str(node_id), "message": message, "field": field},
    )


def send(event: str, payload) -> None:
    """Send ``payload()`` (called only where a server listens) as ``event``, JSON-safe."""
    server = sys.modules.get("server")  # a serving process has: ComfyUI's main.py imports it
    instance = getattr(getattr(server, "PromptServer", None), "instance", None)
    if instance is None:
        return
    try:
        instance.send_sync(event, jsonable(payload()))
    except Exception as e:  # a UI message must never fail a sampling run
        log.warning("[BCG] could not send %s: %s", event, e)
