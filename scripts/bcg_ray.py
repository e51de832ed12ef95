#!/usr/bin/env python3
"""Run a BCG job spec on a Ray cluster: one actor per ComfyUI server, one Ray task per job.

For batches that outgrow one machine (for one server, scripts/bcg_client.py is simpler and needs
nothing installed). Needs ``pip install ray``; neither the pack nor bcg_client.py imports it.

* Each ComfyUI server is an actor (``ComfyServer``): given by URL (``--servers``), or started by the
  runner (``--comfyui PATH --gpus N``: N servers, one GPU each, on any node of the cluster that has
  a free GPU; ``--comfy-args`` are passed to ComfyUI's main.py).
* Each job of the spec (the same format as bcg_client.py's, read by its ``load_spec``) is a Ray
  task (``run_job``) that takes a free server from the pool actor (``Pool``), queues its prompt
  there and waits for it. A server that stops answering for ``--lost-after`` seconds, or whose
  actor died, or that lost the prompt (restarted), makes the task fail; Ray retries it (up to
  ``--retries`` times) and the pool hands it another server (one it did not fail on, when there is
  one). A prompt ComfyUI refuses or whose execution fails is failed for good, not retried.
* The driver keeps at most ``--in-flight`` tasks per server outstanding, writes the results JSON
  (``--out``, bcg_client.py's format: one record per job, whatever the retries) after every job,
  saves the images (``--images``; fetched by the actor, written by the driver under the client's
  names) and prints a progress line per job; ``--resume`` skips the jobs a results file has done.
* At the end, the DiT calls replayed as CUDA graphs and those that ran eager are summed per server
  (the difference of GET /bcg/status over the batch) and overall.

Examples::

    python scripts/bcg_ray.py --job spec.json --servers http://gpu0:8188,http://gpu1:8188 --out results.json
    python scripts/bcg_ray.py --address auto --job spec.json --comfyui /opt/ComfyUI --gpus 8 \\
        --out results.json --images images

The exit status is 1 if any job failed for good (or the input was bad), 0 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import shlex
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import ray

HERE = Path(__file__).resolve().parent


def _client():
    """scripts/bcg_client.py as the module ``bcg_client`` (imported, not copied)."""
    if "bcg_client" in sys.modules:
        return sys.modules["bcg_client"]
    spec = importlib.util.spec_from_file_location("bcg_client", HERE / "bcg_client.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bcg_client"] = module
    spec.loader.exec_module(module)
    return module


client = _client()


class ServerLost(RuntimeError):
    """The job's server stopped answering, died or lost the prompt: Ray retries the task elsewhere."""


# --------------------------------------------------------------------------------- server actor
class ComfyServer:
    """One ComfyUI server: runs prompts on it (several at once, threaded) and keeps its BCG totals.

    With ``comfyui`` (a ComfyUI folder) it starts ``python main.py`` there on a free port, on the
    GPU Ray gave the actor, and stops it with the actor."""

    def __init__(self, url: str | None = None, comfyui: str | None = None, comfy_args: list[str] = (), python: str | None = None,
                 start_timeout: float = 300, lost_after: float = 30, poll: float = 0.5, http_timeout: float = 30):  # fmt: skip
        self.lost_after, self.poll, self.http_timeout = lost_after, poll, http_timeout
        self.proc, self.log = None, None
        self.lock = threading.Lock()
        if comfyui:
            url = self._start(Path(comfyui), list(comfy_args), python or sys.executable, start_timeout)
        self.url = url.rstrip("/")
        self.status = client.StatusTracker(self.url)
        try:
            self.status.refresh(http_timeout)  # the baseline of this server's totals
        except client.ServerDown:
            pass

    def _start(self, folder: Path, extra: list[str], python: str, timeout: float) -> str:
        with socket.socket() as s:
            s.bind(("", 0))
            port = s.getsockname()[1]
        host = ray.util.get_node_ip_address()
        env = dict(os.environ)
        gpus = ray.get_gpu_ids()
        if gpus:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpus)
        self.log = Path(os.environ.get("TMPDIR", "/tmp")) / f"bcg_ray_comfyui_{port}.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([python, "main.py", "--listen", host, "--port", str(port), *extra], cwd=folder, env=env,
                                         stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
        url, deadline = f"http://{host}:{port}", time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"ComfyUI in {folder} exited with {self.proc.returncode} while starting; its log ({self.log}) ends: {tail}")
            try:
                client.http_json(url, "/queue", timeout=5)
                return url
            except client.ClientError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"ComfyUI in {folder} did not answer on {url} within {timeout:g}s; see {self.log}")

    def address(self) -> str:
        return self.url

    def ping(self) -> bool:
        """Whether the server answers GET /queue."""
        try:
            client.http_json(self.url, "/queue", timeout=min(self.http_timeout, 10))
            return True
        except client.ClientError:
            return False

    def totals(self) -> dict:
        """{"replayed", "calls", "eager"} since this actor started (refreshed now when the server answers)."""
        with self.lock:
            try:
                self.status.refresh(self.http_timeout)
            except client.ServerDown:
                pass
            return self.status.totals()

    def stop(self) -> None:
        """Stop the ComfyUI this actor started (nothing for a server given by URL)."""
        proc = getattr(self, "proc", None)  # None too on Ray's class wrapper in the driver
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()

    def __del__(self):
        self.stop()

    def _get(self, path: str, since: list[float]) -> dict | None:
        """GET ``path``; None while the server is down, ServerLost once down for lost_after seconds."""
        try:
            answer = client.http_json(self.url, path, timeout=self.http_timeout)
            since[0] = 0.0
            return answer
        except client.ServerDown as e:
            since[0] = since[0] or time.monotonic()
            if time.monotonic() - since[0] >= self.lost_after:
                raise ServerLost(f"{client.server_label(self.url)} did not answer for {self.lost_after:g}s ({e})") from None
            return None

    def run(self, stem: str, prompt: dict, client_id: str, timeout: float, images: bool) -> dict:
        """Queue ``prompt``, wait for it; {"status", "prompt_id", "outputs", "files", "cached", "error", "totals"}.

        A refused or failed prompt is a result (status "failed"); a lost one raises ServerLost."""
        try:
            prompt_id = client.queue(self.url, prompt, client_id, self.http_timeout)
        except client.ServerDown as e:
            raise ServerLost(f"{client.server_label(self.url)} did not answer ({e})") from None
        except client.ClientError as e:
            return {"status": "failed", "prompt_id": None, "error": f"refused by {client.server_label(self.url)}: {e}"}
        started, down = time.monotonic(), [0.0]
        while True:
            time.sleep(self.poll)
            queued = self._get("/queue", down)  # before the history: a prompt in neither is gone
            entry = self._get(f"/history/{prompt_id}", down) if queued is not None else None
            if queued is None or entry is None:
                continue
            entry = entry.get(prompt_id)
            if entry is not None:
                status = entry.get("status") or {}
                if status.get("status_str") == "error":
                    if any(m[0] == "execution_interrupted" for m in status.get("messages", [])):
                        raise ServerLost(f"prompt {prompt_id} was interrupted on {client.server_label(self.url)}")
                    return {"status": "failed", "prompt_id": prompt_id, "error": client.execution_error(prompt_id, status)}
                if not status or status.get("completed"):
                    break
            elif prompt_id not in {str(i[1]) for k in ("queue_running", "queue_pending") for i in queued.get(k, []) if len(i) > 1}:
                raise ServerLost(f"prompt {prompt_id} vanished from {client.server_label(self.url)}'s queue and history (restarted?)")
            if time.monotonic() - started > timeout:
                try:
                    client.http_json(self.url, "/queue", {"delete": [prompt_id]}, timeout=self.http_timeout)
                except client.ClientError:
                    pass
                raise ServerLost(f"not finished on {client.server_label(self.url)} after {timeout:g}s (raise --timeout for long jobs)")
        try:
            files = client.fetch_images(self.url, entry, stem, prompt) if images else []
        except client.ServerDown as e:
            raise ServerLost(f"{client.server_label(self.url)} stopped answering while its images were fetched ({e})") from None
        with self.lock:
            cached = client.served_from_cache(entry, prompt, self.status.sessions)
            try:
                self.status.refresh(self.http_timeout)
            except client.ServerDown:
                pass
            line = client.CACHED if cached else client.run_line(self.status.sessions, prompt)
            totals = self.status.totals()
        return {"status": "done", "prompt_id": prompt_id, "outputs": client.output_files(entry), "files": files, "cached": cached,
                "seconds": round(time.monotonic() - started, 3), "bcg": line, "totals": totals}  # fmt: skip


# ------------------------------------------------------------------------------------------ pool
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

        Raises RuntimeError when none answered for ``timeout`` seconds."""
        since = time.monotonic()
        while True:
            await self._probe()
            tried = {a["server"] for a in self.attempts.get(key, [])}
            live = [u for u in self.servers if u not in self.down and u not in self.dead and self.busy[u] < self.in_flight]
            if live:
                url = min(live, key=lambda u: (u in tried, self.busy[u]))
                self.busy[url] += 1
                self.attempts.setdefault(key, []).append({"server": url})
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
                        self.events.append(f"{client.server_label(url)}: answering again")
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
            self.dead.add(url)
            self.events.append(f"{client.server_label(url)}: its actor died ({reason}); its jobs go to the other servers")
        elif down and url not in self.down:
            self.down[url] = time.monotonic()
            self.events.append(f"{client.server_label(url)}: not answering ({reason}); its jobs go to the other servers")

    def job_attempts(self, key: str) -> list[dict]:
        return self.attempts.get(key, [])

    def take_events(self) -> list[str]:
        events, self.events = self.events, []
        return events

    def state(self) -> dict:
        return {"lost": dict(self.lost), "down": sorted(self.down), "dead": sorted(self.dead)}


# ------------------------------------------------------------------------------------------ task
def run_job(pool, key: str, stem: str, prompt: dict, client_id: str, timeout: float, images: bool) -> dict:
    """One job (a Ray task): run it on a server from ``pool``; ServerLost (Ray retries) when it was lost."""
    url, server = ray.get(pool.acquire.remote(key))
    try:
        result = ray.get(server.run.remote(stem, prompt, client_id, timeout, images))
    except ray.exceptions.RayActorError as e:
        reason = f"the actor of {client.server_label(url)} died ({type(e).__name__})"
        ray.get(pool.lost_on.remote(key, url, reason, True, True))
        raise ServerLost(reason) from None
    except ray.exceptions.RayTaskError as e:
        cause = e.as_instanceof_cause() if hasattr(e, "as_instanceof_cause") else e
        reason = str(getattr(e, "cause", None) or cause).strip().splitlines()[-1]
        ray.get(pool.lost_on.remote(key, url, reason, "did not answer" in reason or "stopped answering" in reason, False))
        raise ServerLost(reason) from None
    attempts = ray.get(pool.finished.remote(key, url, result["status"] if result["status"] == "done" else result["error"], result["prompt_id"]))
    return {**result, "server": url, "attempts": attempts}


# ---------------------------------------------------------------------------------------- driver
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    positive = client._positive
    parser.add_argument("--job", type=Path, required=True, metavar="SPEC", help="job spec JSON (bcg_client.py --help describes it)")
    parser.add_argument("--servers", metavar="URL1,URL2", help="ComfyUI servers to use (one per GPU)")
    parser.add_argument("--comfyui", type=Path, metavar="PATH", help="start the servers: ComfyUI's folder (on every node)")
    parser.add_argument("--gpus", type=positive(int), default=1, help="with --comfyui: servers to start, one GPU each (default %(default)s)")
    parser.add_argument("--cpu", action="store_true", help="with --comfyui: servers without a GPU (ComfyUI's --cpu)")
    parser.add_argument("--comfy-args", default="", help="with --comfyui: more arguments for ComfyUI's main.py")
    parser.add_argument("--address", help="Ray cluster to join (e.g. auto); default: a local Ray")
    parser.add_argument("--set", action="append", default=[], metavar="ID.INPUT=VALUE", help="override a node input (repeatable)")
    parser.add_argument("--out", type=Path, help="the results JSON (default: the --resume file, else bcg_results.json)")
    parser.add_argument("--images", type=Path, metavar="DIR", help="also save the images into DIR")
    parser.add_argument("--resume", type=Path, metavar="RESULTS", help="skip the jobs this results JSON has done")
    parser.add_argument("--in-flight", type=positive(int), default=2, help="prompts queued per server (default %(default)s)")
    parser.add_argument("--retries", type=positive(int), default=3, help="Ray retries of a lost job (default %(default)s)")
    parser.add_argument("--timeout", type=positive(float), default=600, help="seconds a job may take on a server, and that all "
                                                                              "servers may be down (default %(default)s)")  # fmt: skip
    parser.add_argument("--lost-after", type=positive(float), default=30, help="seconds a server may not answer before its job "
                                                                                "moves (default %(default)s)")  # fmt: skip
    parser.add_argument("--poll", type=positive(float), default=0.5, help=argparse.SUPPRESS)
    return parser


class Runner:
    """The driver's side: submits the tasks, collects each job's one result, saves and reports."""

    def __init__(self, args: argparse.Namespace, jobs: list, kept: list[dict], meta: dict, servers: dict, report=print):
        self.args, self.jobs, self.kept, self.meta, self.servers, self.report = args, jobs, kept, meta, servers, report
        self.out = args.out or args.resume or Path("bcg_results.json")
        self.totals = {url: {"replayed": 0, "calls": 0, "eager": {}} for url in servers}
        self.counts = {url: Counter() for url in servers}
        self.lost = Counter()
        self.started = time.monotonic()

    def document(self) -> dict:
        """The results JSON, in bcg_client.py's format."""
        replayed, eager, per_server = 0, Counter(), {}
        for url, totals in self.totals.items():
            per_server[url] = {"done": self.counts[url]["done"], "failed": self.counts[url]["failed"], "lost": self.lost[url], **totals}
            replayed, eager = replayed + totals["replayed"], eager + Counter(totals["eager"])
        counts = Counter(j.status for j in self.jobs)
        return {**self.meta, "servers": list(self.servers), "prompts": len(self.jobs), "done": counts["done"], "failed": counts["failed"],
                "pending": counts["pending"] + counts["running"], "replayed": replayed, "calls": replayed + sum(eager.values()),
                "eager": dict(eager), "cached": sum(j.cached for j in self.jobs if not j.resumed),
                "images": [p for j in self.jobs for p in j.images], "per_server": per_server, "kept": len(self.kept),
                "jobs": [j.record() for j in self.jobs] + list(self.kept)}  # fmt: skip

    def save(self) -> None:
        try:
            client.write_json(self.out, self.document())
        except OSError as e:
            raise client.write_error(self.out, e, "results", "--out") from None

    def settle(self, job, result: dict | None, error: str | None, attempts: list[dict], done: int, total: int) -> None:
        """Record the job's one result (or its failure) and print its progress line."""
        job.attempts = attempts
        if result is not None and result["status"] == "done":
            if self.args.images is not None:
                try:
                    job.images = [str(p) for p in client.save_files(result["files"], self.args.images)]
                except OSError as e:
                    raise client.write_error(self.args.images, e, "images", "--images") from None
            job.status, job.server, job.prompt_id = "done", result["server"], result["prompt_id"]
            job.outputs, job.seconds, job.cached = result["outputs"], result["seconds"], result["cached"]
            self.totals[job.server] = result["totals"]
            self.counts[job.server]["done"] += 1
            line = f"{job.key} on {client.server_label(job.server)} ({job.seconds:.1f}s): {len(job.outputs)} output(s); BCG {result['bcg']}"
        else:
            job.status, job.error = "failed", error if result is None else result["error"]
            if result is not None:
                job.server = result["server"]
                self.counts[job.server]["failed"] += 1
            line = f"{job.key} FAILED: {job.error}"
        minutes = (time.monotonic() - self.started) / 60
        rate = done / minutes if minutes > 0 else 0.0
        self.report(f"[{done}/{total}] {line} | {rate:.1f} jobs/min")

    def run(self, pool) -> None:
        args, client_id = self.args, uuid.uuid4().hex
        pending = [j for j in self.jobs if j.status == "pending"]
        total, done, window = len(pending), 0, args.in_flight * len(self.servers)
        task = ray.remote(run_job).options(num_cpus=0, max_retries=args.retries, retry_exceptions=True)
        refs: dict = {}
        images = args.images is not None
        while pending or refs:
            while pending and len(refs) < window:
                job = pending.pop(0)
                job.status = "running"
                refs[task.remote(pool, job.key, job.stem, job.prompt, client_id, args.timeout, images)] = job
            ready, _ = ray.wait(list(refs), num_returns=1, timeout=1.0)
            for line in ray.get(pool.take_events.remote()):
                self.report(line)
            for ref in ready:
                job = refs.pop(ref)
                done += 1
                try:
                    result, error = ray.get(ref), None
                except ray.exceptions.RayError as e:
                    cause = getattr(e, "cause", None)
                    reason = str(cause or e).strip().splitlines()[-1] if str(cause or e).strip() else type(e).__name__
                    result, error = None, f"lost {args.retries + 1} times (limit: --retries {args.retries}); last: {reason}"
                attempts = result["attempts"] if result else ray.get(pool.job_attempts.remote(job.key))
                self.settle(job, result, error, attempts, done, total)
                self.save()

    def finish(self) -> None:
        """The final totals of the servers still there."""
        state = {url: server.totals.remote() for url, server in self.servers.items()}
        for url, ref in state.items():
            try:
                self.totals[url] = ray.get(ref, timeout=30)
            except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError):
                pass

    def summary(self) -> list[str]:
        doc, lines = self.document(), []
        for url, totals in self.totals.items():
            head = f"{client.server_label(url)}: {self.counts[url]['done']} done, {self.counts[url]['failed']} failed, {self.lost[url]} lost and rerun; BCG "
            lines += client.totals_lines("", totals["replayed"], Counter(totals["eager"]), head)
        lines += client.totals_lines("", doc["replayed"], Counter(doc["eager"]), f"BCG over {sum(c['done'] for c in self.counts.values())} prompt(s): ")
        if doc["cached"]:
            lines.append(f"  {doc['cached']} of them served from ComfyUI's cache (nothing sampled, no DiT call)")
        if self.args.images is not None:
            lines.append(f"{len(doc['images'])} image(s) in {self.args.images}")
        failed = [j.key for j in self.jobs if j.status == "failed"]
        if failed:
            lines.append(f"{len(failed)} job(s) failed for good: {', '.join(failed[:10])}{' ...' if len(failed) > 10 else ''} (the errors are above)")
        return lines + [f"results in {self.out}"]


def start_servers(args: argparse.Namespace) -> dict:
    """{url: ComfyServer actor}: one per --servers URL, or --gpus started ones."""
    actor = ray.remote(ComfyServer)
    common = {"lost_after": args.lost_after, "poll": args.poll}
    concurrency = args.in_flight + 4
    if args.comfyui:
        extra = shlex.split(args.comfy_args) + (["--cpu"] if args.cpu else [])
        options = {"num_gpus": 0 if args.cpu else 1, "num_cpus": 1 if args.cpu else 0, "max_concurrency": concurrency}
        made = [actor.options(**options).remote(comfyui=str(args.comfyui.resolve()), comfy_args=extra, **common) for _ in range(args.gpus)]
    else:
        made = [actor.options(num_cpus=0, max_concurrency=concurrency).remote(url=url, **common) for url in client.parse_servers(args.servers)]
    return {ray.get(a.address.remote()): a for a in made}


def main(argv: list[str] | None = None) -> int:
    """The CLI; 0 when every job is done, 1 on bad input, a write failure or any job failed."""
    args = build_parser().parse_args(argv)
    try:
        if bool(args.servers) == bool(args.comfyui):
            raise client.ClientError("give the servers with --servers URL1,URL2 or have them started with --comfyui PATH --gpus N")
        spec = client.load_spec(args.job, args.set)
        skipped, kept = client.apply_resume(spec.jobs, args.resume) if args.resume else (0, [])
        if args.images is not None:
            client.check_folder(args.images, "--images")
    except (client.ClientError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for module in (client, sys.modules[__name__]):  # the workers need not have scripts/ on their path
        ray.cloudpickle.register_pickle_by_value(module)
    if not ray.is_initialized():
        ray.init(address=args.address, log_to_driver=False)
    servers = {}
    try:
        servers = start_servers(args)
        meta = {"spec": str(args.job), "workflow": str(spec.workflow_path), "runner": "ray"}
        runner = Runner(args, spec.jobs, kept, meta, servers)
        runner.save()  # an unwritable --out stops here, before any prompt
        resumed = f"; {skipped} already done in {args.resume}" if args.resume else ""
        print(f"{len(spec.jobs)} job(s) ({spec.shape}){resumed}; {sum(j.status == 'pending' for j in spec.jobs)} to run on "
              f"{len(servers)} server(s) as Ray tasks: {', '.join(servers)}", flush=True)  # fmt: skip
        pool = ray.remote(Pool).options(num_cpus=0).remote(servers, args.in_flight, timeout=args.timeout)
        runner.run(pool)
        runner.lost.update(ray.get(pool.state.remote())["lost"])
        runner.finish()
        runner.save()
    except (client.ClientError, ray.exceptions.RayError) as e:
        print(f"error: {str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__}", file=sys.stderr)
        return 1
    finally:
        for server in servers.values():
            try:
                ray.get(server.stop.remote(), timeout=60)
            except ray.exceptions.RayError:
                pass
    for line in runner.summary():
        print(line)
    return 1 if any(j.status == "failed" for j in spec.jobs) else 0


if __name__ == "__main__":
    sys.exit(main())
