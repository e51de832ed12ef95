"""A kernel profile of one prompt inside a running ComfyUI server (``bench.server --profile``).

The server benchmark times prompts from outside; where two variants differ and the cause is not in
the pack's Python (MiniMax H3 on a stock server, docs/benchmarks.md), the answer is in what the GPU
and the CUDA runtime did during the sampling. The in-process benchmark has that profile
(``bench.measure.kernel_seconds``) but not the server's context: Dynamic VRAM, the model BCG's
twin replaces, ComfyUI's executor.

How: ``--profile`` links :data:`NODE_DIR` into the server's ``custom_nodes`` (a module with no
nodes: on import it wraps ``comfy.sample.sample``, which KSampler calls). Before a prompt that is to
be profiled, the benchmark writes a request file (:func:`request`) naming where the result goes;
the next sampling takes the request (deleting the file), runs under ``torch.profiler`` and writes
:func:`summary`'s JSON there. Every other sampling pays one ``os.path.exists``.
"""

from __future__ import annotations

import functools
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

#: The custom-node folder ``--profile`` links into the server's ``custom_nodes``.
NODE_DIR = Path(__file__).resolve().parent / "server_profile_node"
#: The request file, in the server's working directory (the ComfyUI tree).
REQUEST = "bcg_bench_profile_request.json"
#: CUDA runtime calls counted by name: allocation and synchronisation, where a host-bound
#: sampling loses its time without a kernel to show for it.
RUNTIME_CALLS = (
    "cudaMalloc", "cudaFree", "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
    "cudaMemcpyAsync", "cudaLaunchKernel", "cudaGraphLaunch",
)  # fmt: skip


def request(tree: Path, out: Path) -> None:
    """Ask the server in ``tree`` to profile its next sampling into ``out``."""
    out.unlink(missing_ok=True)
    (tree / REQUEST).write_text(json.dumps({"out": str(out)}))


def take_request(cwd: Path) -> Path | None:
    """The output path of a pending request, removing it (one sampling per request), else None."""
    path = cwd / REQUEST
    if not path.exists():
        return None
    try:
        out = Path(json.loads(path.read_text())["out"])
    finally:
        path.unlink(missing_ok=True)
    return out


def summary(averages: Any, wall_s: float) -> dict:
    """What one profiled sampling did: wall seconds, kernel seconds and the busy fraction (kernel
    seconds over wall: below 1 where the GPU waited for the host), kernel seconds by kind, the
    costliest kernels, the counted CUDA runtime calls and the number of CPU-side operator calls."""
    import torch

    from .report import kernel_summary

    kernel_s, split, top = kernel_summary(averages)
    runtime = {name: 0 for name in RUNTIME_CALLS}
    cpu_ops = 0
    for evt in averages:
        if evt.device_type == torch.autograd.DeviceType.CUDA:
            continue
        if evt.key in runtime:
            runtime[evt.key] += evt.count
        elif evt.key.startswith("aten::"):
            cpu_ops += evt.count
    return {
        "wall_s": round(wall_s, 4),
        "kernel_s": round(kernel_s, 4),
        "busy": round(kernel_s / wall_s, 3) if wall_s > 0 else None,
        "split": {k: round(v, 4) for k, v in split.items()},
        "top": top,
        "runtime_calls": runtime,
        "aten_calls": cpu_ops,
    }


def profiled(sample: Callable, cwd: Path) -> Callable:
    """``sample`` (``comfy.sample.sample``) that profiles itself when a request is pending."""

    @functools.wraps(sample)
    def wrapper(*args, **kwargs):
        out = take_request(cwd)
        if out is None:
            return sample(*args, **kwargs)
        import torch
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
        with profile(activities=activities) as prof:
            start = time.perf_counter()
            result = sample(*args, **kwargs)
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            wall_s = time.perf_counter() - start
        out.write_text(json.dumps(summary(prof.key_averages(), wall_s), indent=1))
        return result

    return wrapper


def install_in_server() -> None:
    """Called by :data:`NODE_DIR`'s module as ComfyUI imports it: wrap ``comfy.sample.sample``."""
    import comfy.sample

    if not getattr(comfy.sample.sample, "__bcg_bench_profiled__", False):
        comfy.sample.sample = profiled(comfy.sample.sample, Path(os.getcwd()))
        comfy.sample.sample.__bcg_bench_profiled__ = True
