"""The single-machine scheduler: one thread per ComfyUI server keeps prompts queued there, polls
them, moves the jobs of a server that stopped answering to the others and resubmits lost prompts.
(Beyond one machine: ``bcg_client.on_ray`` runs the same jobs on a Ray cluster.)"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from .comfy_http import (
    download_images,
    execution_error,
    execution_seconds,
    http_json,
    output_files,
    queue,
    server_label,
)
from .errors import ClientError, ServerDown, WriteError, write_error
from .jobs import Job
from .status import CACHED, StatusTracker, run_line, served_from_cache


@dataclass
class BatchConfig:
    """How a batch runs (the CLI options of the same names)."""

    in_flight: int = 2  # prompts queued per server
    retries: int = 3  # resubmissions of a lost job
    timeout: float = 600.0  # a job's seconds on a server; also how long all servers may be down
    lost_after: float = 30.0  # a down server's jobs go elsewhere after this many seconds
    poll: float = 0.5
    backoff: tuple[float, float] = (1.0, 30.0)  # first and largest wait between probes of a down server
    http_timeout: float = 30.0
    images: Path | None = None  # download images here
    images_option: str = "--images"  # the option that gave ``images`` (for error messages)
    client_id: str = field(default_factory=lambda: uuid.uuid4().hex)


class ServerWorker:
    """One server's thread: keeps ``in_flight`` prompts queued, polls them, recovers when it is down.

    Shared state (jobs, the pending queue, counts) is only changed through the Batch, under its lock."""

    def __init__(self, url: str, batch: Batch):
        self.url, self.label, self.batch = url, server_label(url), batch
        self.in_flight: dict[str, Job] = {}
        self.down_since: float | None = None
        self.next_probe, self.delay = 0.0, batch.config.backoff[0]
        self.done = self.failed = self.lost = 0
        self.status = StatusTracker(url)
        self.thread = threading.Thread(target=self._loop, daemon=True, name=f"bcg-client {self.label}")

    # -- loop
    def _loop(self) -> None:
        """Run until the batch stops; a ServerDown anywhere marks the server down.

        Any other error also marks it down (with the error as the reason), so that its jobs move
        on after lost_after instead of the batch waiting for a dead thread."""
        config, first = self.batch.config, True
        while not self.batch.stop.is_set():
            pause = config.poll
            try:
                if first:
                    first = False
                    self.status.refresh(config.http_timeout)  # the baseline of the totals
                if self.down_since is not None:
                    pause = self._while_down()
                else:
                    self._poll_in_flight()
                    self._submit()
            except ServerDown as e:
                self._mark_down(str(e))
            except Exception as e:  # noqa: BLE001 - a worker thread must not die silently
                self._mark_down(f"client error {e!r}")
            self.batch.stop.wait(pause)

    def _mark_down(self, reason: str) -> None:
        now = time.monotonic()
        if self.down_since is None:
            self.down_since, self.delay = now, self.batch.config.backoff[0]
            held = (
                f"; its {len(self.in_flight)} job(s) move to other servers in {self.batch.config.lost_after:g}s"
                if self.in_flight
                else ""
            )
            self.batch.report(f"{self.label}: not answering ({reason}){held}; retrying with backoff")
        else:
            self.delay = min(self.delay * 2, self.batch.config.backoff[1])
        self.next_probe = now + self.delay

    def _while_down(self) -> float:
        """Release held jobs after lost_after, probe when due; the seconds to pause."""
        now = time.monotonic()
        if self.in_flight and now - self.down_since >= self.batch.config.lost_after:
            for job in self.in_flight.values():
                self.batch.lost(job, self, f"{self.label} did not answer for {now - self.down_since:.1f}s")
            self.in_flight.clear()
        if now < self.next_probe:
            return min(self.batch.config.poll, self.next_probe - now)
        http_json(self.url, "/queue", timeout=self.batch.config.http_timeout)
        self.batch.report(f"{self.label}: answering again after {now - self.down_since:.1f}s")
        self.down_since = None
        self.status.refresh(self.batch.config.http_timeout)
        return 0.0

    # -- work
    def _submit(self) -> None:
        while len(self.in_flight) < self.batch.config.in_flight:
            job = self.batch.take()
            if job is None:
                return
            try:
                prompt_id = queue(self.url, job.prompt, self.batch.config.client_id, self.batch.config.http_timeout)
            except ClientError as e:
                if isinstance(e, ServerDown):
                    self.batch.put_back(job)
                    raise
                self.batch.fail(job, self, f"refused by {self.label}: {e}")
                continue
            except BaseException:
                self.batch.put_back(job)
                raise
            self.batch.submitted(job, self, prompt_id)
            self.in_flight[prompt_id] = job

    def _poll_in_flight(self) -> None:
        """Settle every in-flight prompt that finished, failed or vanished."""
        if not self.in_flight:
            return
        timeout = self.batch.config.http_timeout
        answer = http_json(self.url, "/queue", timeout=timeout)  # read before the histories: see _unfinished
        queued = {
            str(item[1]) for key in ("queue_running", "queue_pending") for item in answer.get(key, []) if len(item) > 1
        }
        for prompt_id, job in list(self.in_flight.items()):
            entry = http_json(self.url, f"/history/{prompt_id}", timeout=timeout).get(prompt_id)
            if entry is None:
                self._unfinished(prompt_id, job, queued)
            else:
                self._finished(prompt_id, job, entry)

    def _unfinished(self, prompt_id: str, job: Job, queued: set[str]) -> None:
        """A prompt not in the history: still queued (unless too long), else it vanished.

        The queue was read before the history, and ComfyUI moves a finished prompt from the queue to
        the history in one step (under one lock), so a prompt in neither is gone (the server restarted)."""
        if prompt_id not in queued:
            del self.in_flight[prompt_id]
            self.batch.lost(
                job, self, f"prompt {prompt_id} vanished from {self.label}'s queue and history (restarted?)"
            )
        elif time.monotonic() - job.submitted > self.batch.config.timeout:
            del self.in_flight[prompt_id]
            try:  # best effort: take it out of that queue so it does not run twice
                http_json(self.url, "/queue", {"delete": [prompt_id]}, timeout=self.batch.config.http_timeout)
            except ClientError:
                pass
            self.batch.lost(
                job,
                self,
                f"not finished on {self.label} after {self.batch.config.timeout:g}s (raise --timeout for long jobs)",
            )

    def _finished(self, prompt_id: str, job: Job, entry: dict) -> None:
        status = entry.get("status") or {}
        if status.get("status_str") == "error":
            del self.in_flight[prompt_id]
            if any(m[0] == "execution_interrupted" for m in status.get("messages", [])):
                self.batch.lost(job, self, f"prompt {prompt_id} was interrupted on {self.label}")
            else:
                self.batch.fail(job, self, f"{self.label}: {execution_error(prompt_id, status)}")
            return
        if status and not status.get("completed"):
            return
        images = []
        if self.batch.config.images is not None:  # before "done": a server lost mid-download reruns the job
            try:
                images = [
                    str(p) for p in download_images(self.url, entry, self.batch.config.images, job.stem, job.prompt)
                ]
            except OSError as e:  # network errors are ServerDown; this one is local: no later job could save either
                del self.in_flight[prompt_id]
                self.batch.abort(write_error(self.batch.config.images, e, "images", self.batch.config.images_option))
                return
        del self.in_flight[prompt_id]
        cached = served_from_cache(entry, job.prompt, self.status.sessions)
        self.batch.done(job, self, output_files(entry), images, cached, execution_seconds(entry))
        try:
            self.status.refresh(self.batch.config.http_timeout)
        finally:
            self.batch.report_done(job, self)


class Batch:
    """Runs jobs on servers (one ServerWorker thread each) until every job is done or failed.

    ``report(line)`` receives the progress lines; ``on_change()`` is called (under the lock) after
    every change of a job's state, e.g. to save the results. Every job's state changes only here."""

    def __init__(self, jobs: list[Job], servers: list[str], config: BatchConfig, report=None, on_change=None):
        self.jobs, self.config = jobs, config
        self._report, self.on_change = report or (lambda line: None), on_change or (lambda: None)
        self.lock = threading.RLock()
        self.stop = threading.Event()
        self.pending = deque(j for j in jobs if j.status == "pending")
        self.total = len(self.pending)
        self.settled = 0
        self.workers = [ServerWorker(url, self) for url in servers]
        self.started = time.monotonic()
        self.fatal: WriteError | None = None  # a local write failed: the batch stopped (see abort)
        self.errors: dict[str, str] = {}  # each error a job failed with -> the first job it was printed for

    def abort(self, error: WriteError) -> None:
        """Stop the batch for good (a results or image file cannot be written): no job is submitted
        after this, the workers stop, and run() takes the prompts still queued off the servers."""
        with self.lock:
            if self.fatal is None:
                self.fatal = error
            self.stop.set()

    def _changed(self) -> None:
        """on_change(), whose write failure aborts the batch instead of reaching a worker's loop."""
        if self.fatal is not None:
            return
        try:
            self.on_change()
        except WriteError as e:
            self.abort(e)
        except OSError as e:
            self.abort(write_error(Path("."), e, "results", "--out"))

    # -- running
    def run(self) -> None:
        """Start the workers and wait until every job settled (or no server answered for --timeout)."""
        for worker in self.workers:
            worker.thread.start()
        try:
            while not self.stop.wait(self.config.poll):
                with self.lock:
                    if self.settled >= self.total:
                        break
                    self._give_up_if_all_down()
        finally:
            self.stop.set()
            for worker in self.workers:
                worker.thread.join()
            if self.fatal is not None:
                self._unqueue()
            with self.lock:  # interrupted: what ran nowhere is pending again, for --resume
                for job in self.jobs:
                    if job.status == "running":
                        job.status = "pending"
        for worker in self.workers:
            if worker.down_since is None:
                try:
                    worker.status.refresh(self.config.http_timeout)
                except ServerDown:
                    pass

    def _unqueue(self) -> None:
        """Best effort: take the prompts still waiting in the servers' queues off them (the one
        running finishes; its job stays pending, for --resume)."""
        for worker in self.workers:
            if worker.in_flight and worker.down_since is None:
                try:
                    http_json(
                        worker.url, "/queue", {"delete": list(worker.in_flight)}, timeout=self.config.http_timeout
                    )
                except ClientError:
                    pass

    def _give_up_if_all_down(self) -> None:
        downs = [w.down_since for w in self.workers]
        if all(d is not None for d in downs) and time.monotonic() - max(downs) >= self.config.timeout:
            error, failed = f"no server answered for {self.config.timeout:g}s; start them (or raise --timeout)", 0
            for job in self.jobs:
                if job.status in ("pending", "running"):
                    self._settle(job, None, "failed", error)
                    self.errors.setdefault(error, job.key)
                    failed += 1
            if failed:
                self.report(f"[{self.settled}/{self.total}] {failed} job(s) FAILED: {error}")
            self.pending.clear()

    def per_server(self) -> dict[str, dict]:
        """{url: {"done", "failed", "lost", "replayed", "calls", "eager"}} so far (results_document's input)."""
        return {w.url: {"done": w.done, "failed": w.failed, "lost": w.lost, **w.status.totals()} for w in self.workers}

    # -- job state (each method ignores a job that has settled already)
    def take(self) -> Job | None:
        """The next pending job, marked running; None when there is none."""
        with self.lock:
            if not self.pending or self.stop.is_set():
                return None
            job = self.pending.popleft()
            job.status = "running"
            return job

    def put_back(self, job: Job) -> None:
        """A job whose submission did not reach the server: first in line again, no attempt used."""
        with self.lock:
            if job.status == "running":
                job.status = "pending"
                self.pending.appendleft(job)

    def submitted(self, job: Job, worker: ServerWorker, prompt_id: str) -> None:
        with self.lock:
            job.server, job.prompt_id, job.submitted = worker.url, prompt_id, time.monotonic()
            job.attempts.append({"server": worker.url, "prompt_id": prompt_id})
            self._changed()

    def done(self, job: Job, worker: ServerWorker, outputs: list[dict], images: list[str], cached: bool = False,
             run_seconds: float | None = None) -> None:  # fmt: skip
        with self.lock:
            if job.status == "running":
                job.outputs, job.images, job.cached, job.run_seconds = outputs, images, cached, run_seconds
                job.seconds = round(time.monotonic() - job.submitted, 3)
                job.attempts[-1]["result"] = "done"
                self._settle(job, worker, "done")

    def fail(self, job: Job, worker: ServerWorker, error: str) -> None:
        """Failed for good (refused, or its execution failed)."""
        with self.lock:
            if job.status == "running":
                if job.attempts and "result" not in job.attempts[-1]:
                    job.attempts[-1]["result"] = error
                self._settle(job, worker, "failed", error)
                self._report_failure(job, error)

    def lost(self, job: Job, worker: ServerWorker, reason: str) -> None:
        """The job's prompt is gone or stuck: resubmit it, or fail it after ``retries`` resubmissions."""
        with self.lock:
            if job.status != "running":
                return
            job.attempts[-1]["result"] = reason
            worker.lost += 1
            if len(job.attempts) > self.config.retries:
                error = f"lost {len(job.attempts)} times (limit: --retries {self.config.retries}); last: {reason}"
                self._settle(job, worker, "failed", error)
                self._report_failure(job, error)
                return
            job.status = "pending"
            self.pending.appendleft(job)
            self._changed()
            self.report(
                f"{job.key}: {reason}; resubmitting (attempt {len(job.attempts) + 1} of {self.config.retries + 1})"
            )

    def _report_failure(self, job: Job, error: str) -> None:
        """``[n/total] key FAILED: error``, the error only the first time it is seen."""
        first = self.errors.setdefault(error, job.key)
        said = error if first == job.key else f"the same error as {first} (above)"
        self.report(f"[{self.settled}/{self.total}] {job.key} FAILED: {said}")

    def _settle(self, job: Job, worker: ServerWorker | None, status: str, error: str | None = None) -> None:
        job.status, job.error = status, error
        self.settled += 1
        if worker is not None:
            worker.done += status == "done"
            worker.failed += status == "failed"
        self._changed()

    # -- progress
    def report(self, line: str) -> None:
        with self.lock:
            self._report(line)

    def report_done(self, job: Job, worker: ServerWorker) -> None:
        """``[done/total] key on server (s): outputs; BCG last run | per server | rate``."""
        with self.lock:
            minutes = (time.monotonic() - self.started) / 60
            rate = self.settled / minutes if minutes > 0 else 0.0
            left = self.total - self.settled
            seconds = 60 * left / rate if rate and left else 0
            eta = f", {seconds:.0f}s left" if 0 < seconds < 120 else f", {seconds / 60:.0f} min left" if seconds else ""
            servers = ", ".join(f"{w.label} {w.done} done {len(w.in_flight)} queued" + (" DOWN" if w.down_since is not None else "")
                                for w in self.workers)  # fmt: skip
            if job.cached:
                bcg = CACHED
            else:
                bcg = (
                    run_line(worker.status.sessions, job.prompt)
                    if worker.status.base is not None
                    else "totals unavailable"
                )
            self.report(f"[{self.settled}/{self.total}] {job.key} on {worker.label} ({job.seconds:.1f}s): "
                        f"{len(job.outputs)} output(s); BCG {bcg} | {servers} | {rate:.1f} jobs/min{eta}")  # fmt: skip
