"""Tell the browser what happened: one ``bcg.status`` event per sampling run and warm-up.

The frontend extension (``web/bcg.js``) listens with ``api.addEventListener("bcg.status", ...)``
and finds the nodes by id. Without a running server (tests, scripts) this is a no-op.
"""

from __future__ import annotations

import logging
import math
from typing import Any

log = logging.getLogger(__name__)
EVENT = "bcg.status"


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


def publish(session) -> None:
    try:
        from server import PromptServer
    except Exception:  # no ComfyUI server in this process
        return
    instance = getattr(PromptServer, "instance", None)
    if instance is None:
        return
    try:
        instance.send_sync(EVENT, jsonable(session.status()))
    except Exception as e:  # a UI message must never fail a sampling run
        log.warning("[BCG] could not send %s: %s", EVENT, e)
