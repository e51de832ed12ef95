"""Tell the browser what happened: one ``bcg.status`` event per sampling run and warm-up.

The frontend extension (``web/bcg.js``) listens with ``api.addEventListener("bcg.status", ...)``
and finds the nodes by id. Without a running server (tests, scripts) this is a no-op.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)
EVENT = "bcg.status"


def publish(session) -> None:
    try:
        from server import PromptServer
    except Exception:  # no ComfyUI server in this process
        return
    instance = getattr(PromptServer, "instance", None)
    if instance is None:
        return
    try:
        instance.send_sync(EVENT, session.status())
    except Exception as e:  # a UI message must never fail a sampling run
        log.warning("[BCG] could not send %s: %s", EVENT, e)
