"""What a session tells the user: the run's one log line, the ``bcg.status`` event the badge and
the details view read, and the JSON of ``/bcg/status``."""

from __future__ import annotations

import logging
from typing import Any

from ..core import reasons, summarize_run
from ..core.reasons import headline, kind_of
from . import events, guards

log = logging.getLogger(__name__)


def publish_run(session: Any, notes: list[str], replayed: int, eager: Any, evicted: int = 0) -> None:
    """Log a run's one line, keep it as the session's ``last_run`` and send it to the browser (a
    run with no DiT call says nothing). ``notes``: what the summary says besides its counts."""
    calls = replayed + sum(eager.values())
    if not calls:
        return
    summary = "; ".join([summarize_run(replayed, eager, evicted), *notes])
    log.info("[BCG] %s", log_line(session, replayed, calls, eager, summary))
    session.last_run = {
        "replayed": replayed,
        "calls": calls,
        "eager": dict(eager),
        "eager_kinds": {str(r): kind_of(r) for r in eager},
        "evicted": evicted,
        "notes": notes,
        "summary": summary,
        "state": badge_state(replayed, calls),
    }
    publish(session)


def publish(session: Any) -> None:
    """Send the session's :func:`status` as a ``bcg.status`` event (a no-op without a server)."""
    events.send(events.EVENT, lambda: status(session))


def log_line(session: Any, replayed: int, calls: int, eager: Any, summary: str) -> str:
    """The run's one log line: the model and the summary; a run that BCG was off for says so in a
    few words (the reason itself was logged once, at start-up or by BCG Apply)."""
    model = session.adapter.display_name if session.adapter else "unsupported model"
    off = session.runner.disabled_reason
    if off and not replayed and all(getattr(r, "kind", None) is reasons.DISABLED for r in eager):
        return f"{model}: {calls} DiT calls ran eager, BCG is off ({headline(off)})"
    return f"{model}: {summary}"


def badge_state(replayed: int, calls: int) -> str:
    """'replayed' (all), 'partial' or 'off' (none), the badge colours of the UI."""
    if calls and replayed == calls:
        return "replayed"
    return "partial" if replayed else "off"


def disabled_scope(session: Any) -> str | None:
    """'process' when BCG is off because no model of this process can run (the reason said at
    start-up), 'model' when off for this model or run, None when on."""
    off = session.runner.disabled_reason
    if not off:
        return None
    return "process" if off == guards.process_refusal() else "model"


def status(session: Any) -> dict:
    """JSON for the HTTP route and UI events."""
    runner = session.runner
    stats, off = runner.stats, runner.disabled_reason
    blocked = runner.blocked()
    warm = session.last_warmup
    if warm and warm.get("refusal"):
        warm = {**warm, "refusal_short": headline(warm["refusal"])}
    return {
        "id": session.id,
        "model": session.adapter.display_name if session.adapter else None,
        "mode": session.config.mode.value,
        "mode_from_auto": session.config.from_auto,
        "capture": session.config.capture.value,
        "disabled": off,
        # a few words of it for the badge, and whether no model of this process can run (--cpu, no CUDA)
        "disabled_short": headline(off) if off else None,
        "disabled_scope": disabled_scope(session),
        "node_ids": sorted(session.node_ids),
        "captured": [e.as_dict() for e in runner.entries()],
        "blocked": blocked,
        "blocked_kinds": {shape: kind_of(r) for shape, r in blocked.items()},
        "hits": stats.hits,
        "eager": dict(stats.eager),
        "eager_kinds": {str(r): kind_of(r) for r in stats.eager},
        "captures": stats.captures,
        "evictions": stats.evictions,
        "memory_budget_bytes": runner.limits.memory_budget_bytes,
        "capture_seconds": round(stats.capture_seconds, 3),
        # what first-call captures are weighed with (medians of recent captures; None: none yet)
        "capture_cost_ms": round(1000 * stats.costs.overhead_s, 1) if stats.costs.overheads else None,
        "replay_saving_ms": round(1000 * stats.costs.saving_s, 2) if stats.costs.samples else None,
        "pool_bytes": stats.pool_bytes,
        "graph_bytes": runner.memory_bytes,
        "last_run": session.last_run,
        "last_warmup": warm,
    }
