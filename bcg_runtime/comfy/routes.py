"""``GET /bcg/status``: every live BCG session as JSON, for scripts, tests and the browser.

The answer is ``{"process": {...}, "sessions": [BCGSession.status(), ...]}`` (see ``session.py``):
``process`` is ``{"state": "on"}``, or ``{"state": "off", "reason": ..., "short": ...}`` where BCG
can serve no model in this process (:func:`.guards.process_refusal`: no CUDA, ``--cpu``,
cudaMallocAsync), so the browser shows "BCG off" on its nodes before any run. ComfyUI serves it
at ``/bcg/status`` and ``/api/bcg/status``. :func:`register_routes` is called while ComfyUI loads the
pack, before ``PromptServer.add_routes`` freezes the route table; it registers once and does nothing
without a running ComfyUI server (tests, scripts).
"""

from __future__ import annotations

import logging
import sys

from ..core.reasons import headline
from . import events, guards

log = logging.getLogger(__name__)

PATH = "/bcg/status"
_registered = False


def process_state() -> dict:
    """Whether BCG can serve any model in this ComfyUI process, and why not."""
    reason = guards.process_refusal()
    if reason is None:
        return {"state": "on"}
    return {"state": "off", "reason": str(reason), "short": headline(reason)}


def sessions_status() -> dict:
    """``{"process": ..., "sessions": [...]}``, JSON-safe (non-finite floats become strings)."""
    from .session import SESSIONS

    # The prompt worker thread may be changing a session's counters while this runs on the
    # server's event loop; a dict that changed size mid-copy is simply read again.
    for _ in range(2):
        try:
            return _collect(SESSIONS)
        except RuntimeError:
            pass
    return _collect(SESSIONS)


def _collect(sessions) -> dict:
    return events.jsonable({"process": process_state(), "sessions": [s.status() for s in list(sessions.values())]})


def register_routes() -> bool:
    """Add ``GET /bcg/status`` to ComfyUI's server; True once registered, False without a server."""
    global _registered
    if _registered:
        return True
    # ComfyUI's main.py imports ``server`` and builds the PromptServer before loading packs;
    # looking it up (not importing it) keeps this a no-op in tests and scripts.
    server = sys.modules.get("server")
    instance = getattr(getattr(server, "PromptServer", None), "instance", None)
    if instance is None:
        return False
    from aiohttp import web

    @instance.routes.get(PATH)
    async def bcg_status(request: web.Request) -> web.Response:
        return web.json_response(sessions_status())

    _registered = True
    log.info("[BCG] status route registered: GET %s", PATH)
    return True
