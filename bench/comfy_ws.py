"""One prompt on a running ComfyUI server with its websocket open: what the server said about it,
each message with the time it arrived. ``aiohttp`` (ComfyUI's own dependency) speaks the
websocket; ``bcg_client.comfy_http`` queues the prompt.

ComfyUI's websocket messages for a prompt, in order: ``execution_start``, ``execution_cached``
(the nodes it took from its cache), per executed node ``executing`` (``data.node`` = its id) and,
for output nodes, ``executed``; ``progress`` (``value``/``max``) once per finished sampler step;
``executing`` with ``node`` None when the prompt ended (``execution_success`` before it on newer
servers). The pack adds ``bcg.status`` (not tied to a prompt id) after each BCG run.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass, field

from .comfy_server import ComfyServer, post
from .comfy_workflow import SAMPLER_ID


@dataclass
class Run:
    """What the websocket said about one prompt, from queueing it to its end."""

    prompt_id: str
    #: Every ``bcg.status`` payload (the warm-up's, then the sampling run's).
    events: list[dict] = field(default_factory=list)
    #: ``value`` of each ``progress`` message of the KSampler (one per finished sampler step).
    progress: list[int] = field(default_factory=list)
    #: The ``execution_interrupted`` payload when the prompt was interrupted.
    interrupted: dict | None = None
    #: Seconds from just before ``POST /prompt`` to the end message.
    seconds: float = 0.0
    #: ``(seconds since just before POST /prompt, type, data)`` of every message about this prompt
    #: and every ``bcg.status``, in arrival order (``bench.server_stats`` reads the timings).
    messages: list[tuple[float, str, dict]] = field(default_factory=list)

    @property
    def last_run(self) -> dict:
        """``last_run`` of the last bcg.status event: the sampling run's report."""
        assert self.events, "no bcg.status websocket message arrived"
        return self.events[-1]["last_run"]


def run_prompt(
    server: ComfyServer,
    prompt: dict,
    interrupt_after: int | None = None,
    timeout: float = 600,
    sampler_id: str = SAMPLER_ID,
) -> Run:
    """Queue ``prompt`` with a websocket open and wait until it ended; an execution error fails.

    With ``interrupt_after``, ``POST /interrupt`` (for this prompt id) is sent once a progress
    message of the KSampler (node ``sampler_id``) reports that many finished steps.
    """
    return asyncio.run(_run(server, prompt, interrupt_after, timeout, sampler_id))


async def _run(server: ComfyServer, prompt: dict, interrupt_after: int | None, timeout: float, sampler_id: str) -> Run:
    import aiohttp

    from bcg_client import comfy_http

    client_id = uuid.uuid4().hex
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(f"{server.url.replace('http', 'ws', 1)}/ws?clientId={client_id}") as ws:
            start = time.perf_counter()
            run = Run(await asyncio.to_thread(comfy_http.queue, server.url, prompt, client_id))

            async def listen():
                interrupt_sent = False
                async for msg in ws:
                    if msg.type != aiohttp.WSMsgType.TEXT:
                        continue  # binary previews
                    now = time.perf_counter() - start
                    message = json.loads(msg.data)
                    kind, data = message["type"], message.get("data") or {}
                    mine = data.get("prompt_id") == run.prompt_id
                    if mine or kind == "bcg.status":
                        run.messages.append((now, kind, data))
                    if kind == "bcg.status":
                        run.events.append(data)
                    elif kind == "progress" and mine and str(data.get("node")) == sampler_id:
                        run.progress.append(int(data["value"]))
                        if interrupt_after is not None and not interrupt_sent and data["value"] >= interrupt_after:
                            interrupt_sent = True
                            await asyncio.to_thread(post, server.url, "/interrupt", {"prompt_id": run.prompt_id})
                    elif kind == "execution_interrupted" and mine:
                        run.interrupted = data
                    elif kind == "execution_error" and mine:
                        raise AssertionError(
                            f"prompt failed in node {data.get('node_type')}: {data.get('exception_message')}"
                        )
                    elif kind == "executing" and data.get("node") is None and mine:
                        return now

            ended = await asyncio.wait_for(listen(), timeout)
            run.seconds = time.perf_counter() - start if ended is None else ended  # None: the socket closed first
    return run
