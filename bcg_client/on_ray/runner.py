"""The driver's side of the Ray runner: starts (or joins) the server actors, submits one task per
job, records each job's one result whatever the retries, writes the results JSON in the client's
format after every job, saves the images under the client's names and prints the progress."""

from __future__ import annotations

import argparse
import re
import shlex
import time
import uuid
from collections import Counter
from pathlib import Path

import ray

from ..comfy_http import parse_servers, server_label
from ..errors import write_error
from ..files import save_files, write_json
from ..jobs import Job
from ..results import results_document, summary_lines
from .pool import Pool
from .server import ComfyServer, ServerLost
from .task import run_job


class Runner:
    """Submits the tasks, collects each job's one result, saves and reports."""

    def __init__(
        self, args: argparse.Namespace, jobs: list[Job], kept: list[dict], meta: dict, servers: dict, report=print
    ):
        self.args, self.jobs, self.kept, self.meta, self.servers, self.report = args, jobs, kept, meta, servers, report
        self.out = args.out or args.resume or Path("bcg_results.json")
        self.totals = {url: {"replayed": 0, "calls": 0, "eager": {}} for url in servers}
        self.counts = {url: Counter() for url in servers}
        self.lost = Counter()
        self.started = time.monotonic()

    def per_server(self) -> dict[str, dict]:
        """{url: {"done", "failed", "lost", "replayed", "calls", "eager"}} (results_document's input)."""
        return {url: {"done": self.counts[url]["done"], "failed": self.counts[url]["failed"], "lost": self.lost[url], **totals}
                for url, totals in self.totals.items()}  # fmt: skip

    def document(self) -> dict:
        """The results JSON, in the client's format."""
        return results_document(self.jobs, self.per_server(), {**self.meta, "servers": list(self.servers)}, self.kept)

    def save(self) -> None:
        try:
            write_json(self.out, self.document())
        except OSError as e:
            raise write_error(self.out, e, "results", "--out") from None

    def _totals(self, url: str, totals: dict) -> None:
        """Keep a server's latest totals: they only grow, and results may arrive out of order."""
        if totals["calls"] >= self.totals[url]["calls"]:
            self.totals[url] = totals

    def settle(
        self, job: Job, result: dict | None, error: str | None, attempts: list[dict], done: int, total: int
    ) -> None:
        """Record the job's one result (or its failure) and print its progress line."""
        job.attempts = attempts
        if result is not None and result["status"] == "done":
            if self.args.images is not None:
                try:
                    job.images = [str(p) for p in save_files(result["files"], self.args.images)]
                except OSError as e:
                    raise write_error(self.args.images, e, "images", "--images") from None
            job.status, job.server, job.prompt_id = "done", result["server"], result["prompt_id"]
            job.outputs, job.seconds, job.run_seconds, job.cached = (
                result["outputs"],
                result["seconds"],
                result["run_seconds"],
                result["cached"],
            )
            self._totals(job.server, result["totals"])
            self.counts[job.server]["done"] += 1
            ran = f"run {job.run_seconds:.2f}s, " if job.run_seconds is not None else ""
            line = f"{job.key} on {server_label(job.server)} ({ran}{job.seconds:.1f}s from submission): {len(job.outputs)} output(s); BCG {result['bcg']}"
        else:
            job.status, job.error = "failed", error if result is None else result["error"]
            if result is not None:
                job.server = result["server"]
                self.counts[job.server]["failed"] += 1
            line = f"{job.key} FAILED: {job.error}"
        minutes = (time.monotonic() - self.started) / 60
        rate = done / minutes if minutes > 0 else 0.0
        left = 60 * (total - done) / rate if rate and total > done else 0
        eta = f", {left:.0f}s left" if 0 < left < 120 else f", {left / 60:.0f} min left" if left else ""
        self.report(f"[{done}/{total}] {line} | {rate:.1f} jobs/min{eta}")

    def _failure(self, error: ray.exceptions.RayError) -> str:
        """The error of a job whose task failed for good: lost too often, or the runner's fault."""
        cause = getattr(error, "cause", None)
        reason = (str(cause or error).strip().splitlines() or [type(cause or error).__name__])[-1]
        if isinstance(cause, ServerLost):
            return f"lost {self.args.retries + 1} times (limit: --retries {self.args.retries}); last: {reason}"
        return reason

    def run(self, pool) -> None:
        """Run every pending job; returns when each has its one result (done or failed)."""
        args, client_id = self.args, uuid.uuid4().hex
        pending = [j for j in self.jobs if j.status == "pending"]
        total, done, window = len(pending), 0, args.in_flight * len(self.servers)
        task = ray.remote(run_job).options(num_cpus=0, max_retries=args.retries, retry_exceptions=[ServerLost])
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
                    result, error = None, self._failure(e)
                attempts = result["attempts"] if result else ray.get(pool.job_attempts.remote(job.key))
                self.lost = Counter(ray.get(pool.state.remote())["lost"])
                self.settle(job, result, error, attempts, done, total)
                self.save()

    def finish(self) -> None:
        """The final totals of the servers still there."""
        state = {url: server.totals.remote() for url, server in self.servers.items()}
        for url, ref in state.items():
            try:
                self._totals(url, ray.get(ref, timeout=30))
            except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError):
                pass

    def summary(self) -> list[str]:
        return summary_lines(self.document(), self.jobs, self.args.images) + [f"results in {self.out}"]


def actor_error_text(error: Exception) -> str:
    """One line for a Ray error about an actor: the message of the exception its task raised (Ray
    puts a traceback before it), else the first line of Ray's own message."""
    cause = getattr(error, "cause", None)
    text = str(cause if cause is not None else error)
    raised = list(re.finditer(r"^\w+(?:Error|Exception|Lost): ", text, re.M))
    return (
        " ".join((text[raised[-1].end() :] if raised else text.strip().split("\n")[0]).split())[:300]
        or type(error).__name__
    )


def start_servers(args: argparse.Namespace, report=print) -> dict:
    """{url: ComfyServer actor}: one per --servers URL, and --gpus started ones with --comfyui.

    A server whose actor cannot be made (ComfyUI did not start, its node died) is reported and left
    out; RuntimeError when none is left."""
    actor = ray.remote(ComfyServer)
    common = {"lost_after": args.lost_after, "poll": args.poll}
    concurrency = args.in_flight + 4
    made = [(url, actor.options(num_cpus=0, max_concurrency=concurrency).remote(url=url, **common))
            for url in (parse_servers(args.servers) if args.servers else [])]  # fmt: skip
    if args.comfyui:
        extra = shlex.split(args.comfy_args) + (["--cpu"] if args.cpu else [])
        options = {"num_gpus": 0 if args.cpu else 1, "num_cpus": 1 if args.cpu else 0, "max_concurrency": concurrency}
        made += [(f"server {i + 1} of --comfyui {args.comfyui}", actor.options(**options).remote(comfyui=str(args.comfyui.resolve()), comfy_args=extra, **common))
                 for i in range(args.gpus)]  # fmt: skip
    servers, errors = {}, []
    for name, server in made:
        try:
            url = ray.get(server.address.remote())
        except ray.exceptions.RayError as e:
            reason = actor_error_text(e)
            errors.append(f"{name}: {reason}")
            report(f"{name}: not started, left out ({reason})")
            continue
        if url in servers:
            raise RuntimeError(f"{url} is listed twice; list each server once")
        servers[url] = server
    if not servers:
        raise RuntimeError(f"no server could be used: {'; '.join(errors)}")
    return servers


def make_pool(servers: dict, args: argparse.Namespace):
    """The Pool actor for ``servers``."""
    return ray.remote(Pool).options(num_cpus=0).remote(servers, args.in_flight, timeout=args.timeout)
