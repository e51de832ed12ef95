"""``run_job``: one job as a Ray task. It takes a server from the pool, runs the prompt on that
server's actor and returns the result with every attempt; when the server was lost (its actor
died, it stopped answering, it lost the prompt) it tells the pool and raises ``ServerLost``, which
the runner has Ray retry (``retry_exceptions=[ServerLost]``), on another server."""

from __future__ import annotations

import ray

from ..comfy_http import server_label
from .server import ServerLost

#: Words of a ServerLost message that mean the server itself stopped answering (not one prompt lost).
NOT_ANSWERING = ("did not answer", "stopped answering")


def run_job(pool, key: str, stem: str, prompt: dict, client_id: str, timeout: float, images: bool) -> dict:
    """One job (a Ray task): run it on a server from ``pool``; ServerLost (Ray retries) when it was lost."""
    url, server = ray.get(pool.acquire.remote(key))
    try:
        result = ray.get(server.run.remote(stem, prompt, client_id, timeout, images))
    except ray.exceptions.RayActorError as e:
        reason = f"the actor of {server_label(url)} died ({type(e).__name__})"
        ray.get(pool.lost_on.remote(key, url, reason, True, True))
        raise ServerLost(reason) from None
    except ray.exceptions.RayTaskError as e:
        cause = getattr(e, "cause", None)
        reason = (str(cause or e).strip().splitlines() or [type(cause or e).__name__])[-1]
        if not isinstance(cause, ServerLost):  # a fault of the runner itself: failed, not retried
            ray.get(pool.finished.remote(key, url, reason))
            raise RuntimeError(f"on {server_label(url)}: {reason}") from None
        ray.get(pool.lost_on.remote(key, url, reason, any(w in reason for w in NOT_ANSWERING), False))
        raise ServerLost(reason) from None
    ended = result["status"] if result["status"] == "done" else result["error"]
    attempts = ray.get(pool.finished.remote(key, url, ended, result["prompt_id"]))
    return {**result, "server": url, "attempts": attempts}
