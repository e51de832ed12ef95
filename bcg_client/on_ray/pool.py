"""``Pool``: the async actor that hands each job's task a server and records every attempt.

It knows which servers are up, down (not answering; probed again every ``probe_every`` seconds)
or dead (their actor died: never again), and how many prompts each has in flight. Every attempt of
a job (its server, prompt id and how it ended) is kept here, so a job that Ray retried carries all
of its attempts into the results."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import ray

from ..comfy_http import server_label


class Pool:
    """Which servers are up and how busy (an async actor): hands a task a server, records each attempt."""

    def __init__(self, servers: dict, in_flight: int, probe_every: float = 2.0, timeout: float = 600):
        self.servers, self.in_flight, self.probe_every, self.timeout = dict(servers), in_flight, probe_every, timeout
        self.busy = Counter()
        self.down: dict[str, float] = {}  # url -> when it was marked down
        self.dead: set[str] = set()  # its actor died: never again
        self.lost = Counter()
        self.attempts: dict[str, list[dict]] = {}
        self.events: list[str] = []

    async def acquire(self, key: str) -> tuple[str, object]:
        """A live server with a free slot, preferring one this job was not lost on; waits for one.

        An attempt of this job that never ended (the worker running its task died, and Ray retried
        it) frees its slot first. Raises RuntimeError when no server answered for ``timeout`` seconds."""
        attempts = self.attempts.setdefault(key, [])
        if attempts and "result" not in attempts[-1]:
            self.busy[attempts[-1]["server"]] -= 1
            attempts[-1]["result"] = "its task ended without a result (the worker running it died); rerun"
        since = time.monotonic()
        while True:
            await self._probe()
            tried = {a["server"] for a in attempts}
            live = [
                u for u in self.servers if u not in self.down and u not in self.dead and self.busy[u] < self.in_flight
            ]
            if live:
                url = min(live, key=lambda u: (u in tried, self.busy[u]))
                self.busy[url] += 1
                attempts.append({"server": url})
                return url, self.servers[url]
            if any(u not in self.down and u not in self.dead for u in self.servers):
                since = time.monotonic()  # servers are up, only busy
            elif time.monotonic() - since > self.timeout:
                raise RuntimeError(f"no server answered for {self.timeout:g}s; start them (or raise --timeout)")
            await asyncio.sleep(0.05)

    async def _probe(self) -> None:
        now = time.monotonic()
        for url, when in list(self.down.items()):
            if now - when >= self.probe_every:
                self.down[url] = now
                try:
                    if await self.servers[url].ping.remote():
                        del self.down[url]
                        self.events.append(f"{server_label(url)}: answering again")
                except ray.exceptions.RayActorError:
                    self.dead.add(url)
                    del self.down[url]

    def finished(self, key: str, url: str, result: str, prompt_id: str | None = None) -> list[dict]:
        """The attempt on ``url`` ended with ``result``; the job's attempts so far."""
        self.busy[url] -= 1
        attempt = self.attempts[key][-1]
        attempt.update({"prompt_id": prompt_id, "result": result} if prompt_id else {"result": result})
        return self.attempts[key]

    def lost_on(self, key: str, url: str, reason: str, down: bool, dead: bool) -> None:
        """The job was lost on ``url``; ``down``: the server stops answering, ``dead``: its actor died."""
        self.finished(key, url, reason)
        self.lost[url] += 1
        if dead:
            if url not in self.dead:
                self.events.append(f"{server_label(url)}: its actor died ({reason}); its jobs go to the other servers")
            self.dead.add(url)
            self.down.pop(url, None)
        elif down and url not in self.down:
            self.down[url] = time.monotonic()
            self.events.append(f"{server_label(url)}: not answering ({reason}); its jobs go to the other servers")

    def job_attempts(self, key: str) -> list[dict]:
        return self.attempts.get(key, [])

    def take_events(self) -> list[str]:
        events, self.events = self.events, []
        return events

    def state(self) -> dict:
        """{"lost": {url: jobs lost there}, "busy": {url: prompts in flight}, "down": [url], "dead": [url]}."""
        return {
            "lost": dict(self.lost),
            "busy": {u: n for u, n in self.busy.items() if n},
            "down": sorted(self.down),
            "dead": sorted(self.dead),
        }
