"""A real ComfyUI server process (``python main.py``) and what it reports about itself: the
process the server benchmark (:mod:`bench.server`), the e2e tests and the GPU-lab scripts start.

Standard library plus ``bcg_client`` (HTTP); torch only in :func:`cuda_available`. The pack must be
in the server's ``custom_nodes`` (:mod:`bench.comfy_base`): readiness is its ``GET /bcg/status``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from bcg_runtime.allocator_env import OPT_OUT_VAR  # standard library only

#: ComfyUI's own default port, where a bare ``python main.py`` listens.
DEFAULT_PORT = 8188
#: Variables of the test environment a server started "as users start it" must not inherit.
TEST_ONLY_ENV = ("BCG_COMFY_TEST_CPU", "BCG_ARTIFACTS", "BCG_UNVERIFIED_FAMILIES")


def cuda_available() -> bool:
    """Whether this process sees a CUDA GPU; a server started from it then runs on it."""
    import torch

    return torch.cuda.is_available()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_taken(port: int) -> bool:
    """Whether something already listens on 127.0.0.1:``port`` (a second ComfyUI would fail to
    bind, and the readiness check would talk to the first). Bound with ``SO_REUSEADDR`` as
    ComfyUI's aiohttp server binds: a port left in TIME_WAIT by a server just stopped (the next
    model's server of ``bench.server``) is free to it, and so to this check."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def post(server: str, path: str, payload: dict, timeout: float = 30) -> int:
    """POST a JSON body to a route that answers with an empty body (``/free``, ``/interrupt``)."""
    request = urllib.request.Request(
        server.rstrip("/") + path, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status


def _die_with_parent() -> None:
    """In the server's process before ``exec``: Linux sends it SIGTERM when the process that
    started it ends, however that ends (a time limit's SIGKILL included), so no server outlives
    its benchmark or test holding the GPU and the port. Elsewhere nothing happens."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def rss_mib(pid: int) -> float:
    """Resident memory of a process (Linux ``/proc``: ``VmRSS``), MiB; NaN where it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


class ComfyServer:
    """``python main.py ...`` from $COMFYUI_PATH on a free port, logging to ``base/<name>.log``.

    Started as users start ComfyUI: on a GPU with no device flag at all (the pack's prestartup
    script switches ComfyUI's default cudaMallocAsync allocator to PyTorch's native one, see
    ``bcg_runtime/allocator_env.py``), with ``--cpu`` only where there is no CUDA (``cuda``). The
    server inherits this process's environment less :data:`OPT_OUT_VAR`, so a tester's opt-out
    never reaches it unasked; ``env`` adds (or, with value None, removes) variables on top, e.g.
    ``{OPT_OUT_VAR: "1"}`` for a server that keeps cudaMallocAsync.

    ``bare=True``: ``python main.py`` and nothing else (``--cpu`` only without CUDA), run in
    ``base``, which must then be a ComfyUI tree: its own folders and database and ComfyUI's default
    port 8188, as a user starts it (``scripts/noflags_check.py``, :mod:`bench.server`); ``port``
    another port (then ``--port N`` is the one more flag, for a local smoke run beside other
    servers). ``log_path`` overrides where the log goes. ``extra_args`` go after everything else,
    e.g. ``["--disable-dynamic-vram"]`` to measure a start that is not the stock one.
    """

    def __init__(
        self, base: Path, cuda: bool | None = None, env: dict[str, str | None] | None = None, name: str = "server",
        bare: bool = False, log_path: Path | None = None, port: int | None = None, extra_args: list[str] | None = None,
    ):  # fmt: skip
        self.base = base
        self.cuda = cuda_available() if cuda is None else cuda
        self.env = dict(env or {})
        self.bare = bare
        self.port = port or (DEFAULT_PORT if bare else free_port())
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path or base / f"{name}.log"
        self.extra_args = list(extra_args or [])
        self.proc: subprocess.Popen | None = None

    def device_args(self) -> list[str]:
        return [] if self.cuda else ["--cpu"]

    def command(self) -> list[str]:
        """The server's command line (run in :meth:`cwd`)."""
        cmd = [sys.executable, "main.py", *self.device_args()]
        if not self.bare:
            cmd += [
                "--listen", "127.0.0.1", "--port", str(self.port), "--base-directory", str(self.base),
                "--database-url", "sqlite:///:memory:",
            ]  # fmt: skip
        elif self.port != DEFAULT_PORT:
            cmd += ["--port", str(self.port)]
        return cmd + self.extra_args

    def cwd(self) -> str:
        return str(self.base) if self.bare else os.environ["COMFYUI_PATH"]

    def environment(self) -> dict[str, str]:
        """The server's environment (see the class docstring)."""
        env = {k: v for k, v in os.environ.items() if k != OPT_OUT_VAR}
        env["PYTHONUNBUFFERED"] = "1"
        for name, value in self.env.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        return env

    def start(self, timeout: float = 240) -> "ComfyServer":
        if port_taken(self.port):
            raise RuntimeError(
                f"port {self.port} is in use (another ComfyUI?): stop it first, a second server could not listen there"
            )
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                self.command(), cwd=self.cwd(), stdout=log, stderr=subprocess.STDOUT, env=self.environment(),
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ComfyUI exited with {self.proc.returncode} while starting:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url + "/bcg/status", timeout=5) as response:
                    if response.status == 200:
                        return self
            except urllib.error.HTTPError as e:
                if e.code == 404:
                    raise RuntimeError(
                        f"ComfyUI is up but GET /bcg/status is 404: the pack's route did not register\n{self.log_tail()}"
                    ) from None
            except OSError:
                pass
            time.sleep(1)
        raise RuntimeError(f"ComfyUI did not answer within {timeout:.0f}s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def log_lines(self) -> list[str]:
        """The server log so far, one string per line ([] before it exists)."""
        try:
            return self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return []

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"


def alive(server: ComfyServer) -> bool:
    return server.proc is not None and server.proc.poll() is None


def gpu_memory(server: ComfyServer) -> dict:
    """The server's device memory from ``GET /system_stats`` (``devices[0]``), in bytes:
    ``reserved`` (PyTorch's reserved memory, ``torch_vram_total``), ``allocated`` (reserved minus
    PyTorch's free cached memory ``torch_vram_free``) and ``vram_free`` (what ComfyUI counts free).
    Under ``--cpu`` ComfyUI reports system RAM in these fields."""
    from bcg_client import comfy_http

    [device] = comfy_http.http_json(server.url, "/system_stats")["devices"][:1]
    reserved = int(device["torch_vram_total"])
    return {
        "reserved": reserved,
        "allocated": reserved - int(device["torch_vram_free"]),
        "vram_free": int(device["vram_free"]),
    }
