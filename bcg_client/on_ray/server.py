"""``ComfyServer``: the Ray actor of one ComfyUI server.

Given a URL it uses that server; given a ComfyUI folder it starts ``python main.py`` there on a
free port, on the GPU Ray gave the actor (``CUDA_VISIBLE_DEVICES``), and stops it with the actor.
``run`` queues one prompt, waits for it and returns its result; several run at once (a threaded
actor), each polling /queue and /history like the single-machine client.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import ray

from ..comfy_http import execution_error, execution_seconds, fetch_images, http_json, output_files, queue, server_label
from ..errors import ClientError, ServerDown
from ..status import CACHED, StatusTracker, run_line, served_from_cache


class ServerLost(RuntimeError):
    """The job's server stopped answering, died or lost the prompt: Ray retries the task elsewhere."""


class ComfyServer:
    """One ComfyUI server: runs prompts on it (several at once, threaded) and keeps its BCG totals.

    With ``comfyui`` (a ComfyUI folder on the actor's node) it starts ``python main.py`` there on a
    free port, on the GPU Ray gave the actor, and stops it with the actor."""

    def __init__(self, url: str | None = None, comfyui: str | None = None, comfy_args: list[str] = (), python: str | None = None,
                 start_timeout: float = 300, lost_after: float = 30, poll: float = 0.5, http_timeout: float = 30):  # fmt: skip
        self.lost_after, self.poll, self.http_timeout = lost_after, poll, http_timeout
        self.proc, self.log = None, None
        self.lock = threading.Lock()
        if comfyui:
            url = self._start(Path(comfyui), list(comfy_args), python or sys.executable, start_timeout)
        self.url = url.rstrip("/")
        self.status = StatusTracker(self.url)
        try:
            self.status.refresh(http_timeout)  # the baseline of this server's totals
        except ServerDown:
            pass

    def _start(self, folder: Path, extra: list[str], python: str, timeout: float) -> str:
        host = ray.util.get_node_ip_address()
        with socket.socket() as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
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
                raise RuntimeError(
                    f"ComfyUI in {folder} exited with {self.proc.returncode} while starting; its log ({self.log}) ends: {tail}"
                )
            try:
                http_json(url, "/queue", timeout=5)
                return url
            except ClientError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"ComfyUI in {folder} did not answer on {url} within {timeout:g}s; see {self.log}")

    def address(self) -> str:
        return self.url

    def pid(self) -> int | None:
        """The process id of the ComfyUI this actor started (None for a server given by URL)."""
        return self.proc.pid if self.proc is not None else None

    def ping(self) -> bool:
        """Whether the server answers GET /queue."""
        try:
            http_json(self.url, "/queue", timeout=min(self.http_timeout, 10))
            return True
        except ClientError:
            return False

    def totals(self) -> dict:
        """{"replayed", "calls", "eager"} since this actor started (refreshed now when the server answers)."""
        with self.lock:
            try:
                self.status.refresh(self.http_timeout)
            except ServerDown:
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
            answer = http_json(self.url, path, timeout=self.http_timeout)
            since[0] = 0.0
            return answer
        except ServerDown as e:
            since[0] = since[0] or time.monotonic()
            if time.monotonic() - since[0] >= self.lost_after:
                raise ServerLost(f"{server_label(self.url)} did not answer for {self.lost_after:g}s ({e})") from None
            return None

    def run(self, stem: str, prompt: dict, client_id: str, timeout: float, images: bool) -> dict:
        """Queue ``prompt``, wait for it; {"status", "prompt_id", "outputs", "files", "cached", "seconds",
        "run_seconds", "bcg", "totals"} ("error" instead when it failed).

        A refused or failed prompt is a result (status "failed"); a lost one raises ServerLost."""
        try:
            prompt_id = queue(self.url, prompt, client_id, self.http_timeout)
        except ServerDown as e:
            raise ServerLost(f"{server_label(self.url)} did not answer ({e})") from None
        except ClientError as e:
            return {"status": "failed", "prompt_id": None, "error": f"refused by {server_label(self.url)}: {e}"}
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
                        raise ServerLost(f"prompt {prompt_id} was interrupted on {server_label(self.url)}")
                    return {"status": "failed", "prompt_id": prompt_id, "error": execution_error(prompt_id, status)}
                if not status or status.get("completed"):
                    break
            elif prompt_id not in {
                str(i[1]) for k in ("queue_running", "queue_pending") for i in queued.get(k, []) if len(i) > 1
            }:
                raise ServerLost(
                    f"prompt {prompt_id} vanished from {server_label(self.url)}'s queue and history (restarted?)"
                )
            if time.monotonic() - started > timeout:
                try:
                    http_json(self.url, "/queue", {"delete": [prompt_id]}, timeout=self.http_timeout)
                except ClientError:
                    pass
                raise ServerLost(
                    f"not finished on {server_label(self.url)} after {timeout:g}s (raise --timeout for long jobs)"
                )
        try:
            files = fetch_images(self.url, entry, stem, prompt) if images else []
        except ServerDown as e:
            raise ServerLost(
                f"{server_label(self.url)} stopped answering while its images were fetched ({e})"
            ) from None
        with self.lock:
            cached = served_from_cache(entry, prompt, self.status.sessions)
            try:
                self.status.refresh(self.http_timeout)
            except ServerDown:
                pass
            line = CACHED if cached else run_line(self.status.sessions, prompt)
            totals = self.status.totals()
        return {"status": "done", "prompt_id": prompt_id, "outputs": output_files(entry), "files": files, "cached": cached,
                "seconds": round(time.monotonic() - started, 3), "run_seconds": execution_seconds(entry), "bcg": line,
                "totals": totals}  # fmt: skip
