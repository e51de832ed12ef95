"""What BCG did, from GET /bcg/status: replayed and eager DiT calls between two snapshots, per
server across restarts; whether ComfyUI served a prompt from its cache; the report lines."""

from __future__ import annotations

from collections import Counter

from .comfy_http import bcg_status
from .errors import ClientError, ServerDown
from .workflow import SAMPLERS


def run_totals(before: list[dict], after: list[dict]) -> tuple[int, Counter]:
    """(replayed, eager by reason) of the runs between two /bcg/status answers.

    A session absent from ``before``, or whose counts went down (a restarted server), counts from zero.
    A server of a pack before 2026-12 calls the eager counts ``misses``; both are read."""
    base = {s["id"]: s for s in before}
    replayed, eager = 0, Counter()
    for s in after:
        old = base.get(s["id"], {"hits": 0})
        if s["hits"] < old["hits"]:
            old = {"hits": 0}
        replayed += s["hits"] - old["hits"]
        eager.update(Counter(_eager_counts(s)) - Counter(_eager_counts(old)))
    return replayed, eager


def _eager_counts(session: dict) -> dict:
    return session.get("eager", session.get("misses")) or {}


def served_from_cache(entry: dict, workflow: dict, sessions: list[dict]) -> bool:
    """Whether ComfyUI ran none of this prompt's sampling: its history's "execution_cached"
    message lists every KSampler and BCG node of ``workflow`` (as when the same prompt ran before).

    /bcg/status does not move for such a prompt, so its last run is an earlier prompt's; False when
    the history has no such message (nothing known)."""
    cached, seen = set(), False
    for message in (entry.get("status") or {}).get("messages") or []:
        if (
            isinstance(message, list)
            and len(message) == 2
            and message[0] == "execution_cached"
            and isinstance(message[1], dict)
        ):
            seen = True
            cached.update(str(n) for n in message[1].get("nodes") or [])
    bcg = {str(i) for s in sessions for i in s.get("node_ids", [])}
    nodes = {i for i, n in workflow.items() if n.get("class_type") in SAMPLERS or i in bcg}
    return seen and bool(nodes) and nodes <= cached


CACHED = "served from ComfyUI's cache (nothing sampled, no DiT call)"


def run_line(sessions: list[dict], workflow: dict) -> str:
    """The last-run summary of the sessions this workflow's BCG nodes touched."""
    ids = set(workflow)
    runs = [s["last_run"]["summary"] for s in sessions if s.get("last_run") and ids & set(s.get("node_ids", []))]
    return runs[-1] if runs else "no BCG run (BCG Apply not in this workflow, or nothing sampled)"


class StatusTracker:
    """One server's replayed/eager counts since the batch started.

    Each ``refresh`` adds the difference to the previous GET /bcg/status, so a server restart loses
    only what ran since the last refresh (the client refreshes after every finished job)."""

    def __init__(self, url: str):
        self.url, self.base, self.sessions = url, None, []
        self.replayed, self.eager, self.error = 0, Counter(), None

    def refresh(self, timeout: float = 30) -> None:
        """Take a snapshot; ServerDown propagates, any other error is kept in ``error``."""
        try:
            sessions = bcg_status(self.url, timeout)
        except ServerDown:
            raise
        except (ClientError, KeyError, TypeError) as e:
            self.error = str(e) if isinstance(e, ClientError) else f"GET /bcg/status answered without sessions ({e!r})"
            return
        if self.base is not None:  # new objects, not in-place updates: other threads read them
            replayed, eager = run_totals(self.base, sessions)
            self.replayed, self.eager = self.replayed + replayed, self.eager + eager
        self.base = self.sessions = sessions
        self.error = None

    def totals(self) -> dict:
        """{"replayed", "calls", "eager"} (and "bcg_status_error" when the route failed)."""
        out = {"replayed": self.replayed, "calls": self.replayed + sum(self.eager.values()), "eager": dict(self.eager)}
        return {**out, "bcg_status_error": self.error} if self.error else out


def totals_lines(label: str, replayed: int, eager: Counter, head: str) -> list[str]:
    """``<head> replayed r/c DiT calls (p%); eager e`` and one line per eager reason."""
    calls = replayed + sum(eager.values())
    share = f" ({100 * replayed / calls:.0f}%)" if calls else ""
    lines = [f"{label}{head}replayed {replayed}/{calls} DiT calls{share}; eager {sum(eager.values())}"]
    return lines + [f"  {n}x {reason}" for reason, n in eager.most_common()]
