"""The benchmark's rows and how they are shown: the ``Row`` record (also the JSON's), the tables
and the JSON file. Plain Python: ``bench.table`` reads JSON files with no torch or ComfyUI."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

#: Kernel name fragments -> the kind of work, first match wins (attention before GEMM: some
#: attention kernels are GEMM templates; triton templates named ``mm`` are GEMMs).
KERNEL_KINDS = (
    ("attention", ("flash", "fmha", "attn", "attention", "sdpa", "sage")),
    ("gemm", ("gemm", "cutlass", "nvjet", "xmma", "cublas", "scaled_mm", "_mm_", "tem_fused_mm", "matmul")),
    ("triton fused", ("triton",)),
    ("copy", ("memcpy", "memset")),
)


@dataclass
class Row:
    family: str
    resolution: str
    mode: str
    steps: int
    cfg: float
    denoise_s: float | None = None
    speedup: float | None = None
    kernel_s: float | None = None
    busy: float | None = None
    first_run_s: float | None = None
    peak_allocated_gib: float | None = None
    peak_reserved_gib: float | None = None
    #: GPU seconds of one denoise by kind of kernel (:data:`KERNEL_KINDS`, else "elementwise/other").
    kernel_split: dict[str, float] | None = None
    #: The :data:`TOP_KERNELS` kernels with the most GPU time in that denoise: name (cut to 160
    #: characters), kind, calls, seconds; JSON only, for reading where a mode's time went.
    top_kernels: list[dict] | None = None
    #: Mean SM clock and board power over the timed runs (``gpu_clocks``; None without nvidia-smi):
    #: a denser timeline can draw the GPU to its power limit and lower its clock, slowing every kernel.
    sm_clock_mhz: float | None = None
    power_w: float | None = None
    exact: bool | None = None
    max_abs_diff: float | None = None
    replayed: str | None = None
    #: A BCG row's eager DiT calls by reason in its last run (the profiled one where it was
    #: profiled: ``session.last_run``, as ``replayed``); JSON only.
    eager_reasons: dict[str, int] | None = None
    #: A stacked BCG mode's output ``torch.equal`` to the same stack without BCG (``without_bcg``);
    #: for a mode listed again, to its first listing's (:func:`reference_mode`).
    equals_without_bcg: bool | None = None
    #: The mode's second listing in ``--modes``: does the tool reproduce itself (a compile mode
    #: compiles again after dynamo's reset)? Shown as "MODE again".
    again: bool = False
    #: Every timed run's latent ``torch.equal`` to the first's (same seed; None with one timed run):
    #: False says the mode is not deterministic from run to run (atomics, a reduction order that
    #: varies), so no comparison of its output with another mode's can be bit-exact either.
    repeatable: bool | None = None
    #: ``--host-profile N``: one more denoise under cProfile, its N functions with the most own
    #: Python time (where a host-bound mode's wall time goes beyond its kernels); JSON only.
    host_top: list[dict] | None = None
    #: Python function calls and their summed own time in that profiled denoise.
    host_calls: int | None = None
    host_python_s: float | None = None
    error: str | None = None
    runs_s: list[float] = field(default_factory=list)


#: Kernels per profiled row kept by name in the JSON (``Row.top_kernels``).
TOP_KERNELS = 15


def kernel_kind(name: str) -> str:
    """The kind of work a CUDA kernel named ``name`` does (:data:`KERNEL_KINDS`)."""
    lowered = name.lower()
    for kind, fragments in KERNEL_KINDS:
        if any(fragment in lowered for fragment in fragments):
            return kind
    return "elementwise/other"


def kernel_summary(averages) -> tuple[float, dict[str, float], list[dict]]:
    """(kernel seconds, kernel seconds by :func:`kernel_kind`, the :data:`TOP_KERNELS` costliest
    kernels) of a finished profile's ``key_averages()``."""
    import torch

    split: dict[str, float] = {}
    kernels = []
    for evt in averages:
        if evt.device_type == torch.autograd.DeviceType.CUDA:
            us = getattr(evt, "self_device_time_total", None) or getattr(evt, "self_cuda_time_total", 0.0)
            kind = kernel_kind(evt.key)
            split[kind] = split.get(kind, 0.0) + us / 1e6
            kernels.append({"name": evt.key[:160], "kind": kind, "calls": evt.count, "seconds": round(us / 1e6, 4)})
    top = sorted(kernels, key=lambda k: k["seconds"], reverse=True)[:TOP_KERNELS]
    return sum(split.values()), split, top


def size_text(res) -> str:
    """``512x512`` or, with frames, ``832x480x33``."""
    return "x".join(str(v) for v in res if v is not None)


def mode_label(row: Row) -> str:
    """The row's mode as the tables show it: ``compile-inductor again`` for a second listing."""
    return f"{row.mode} again" if row.again else row.mode


def format_table(rows: list[Row], smoke: bool = False) -> str:
    """The rows as a markdown table. ``smoke`` (a run without CUDA): eager alone on a reduced
    model, so no speed-up and no comparison is printed (the JSON keeps every field)."""
    head = [
        "model",
        "res",
        "mode",
        "denoise s",
        "vs eager",
        "kernel s",
        "busy",
        "first run s",
        "peak alloc GiB",
        "exact",
        "= w/o BCG",
        "replayed",
    ]
    lines = [head]
    for r in rows:
        if r.error:
            lines.append(
                [r.family, r.resolution, mode_label(r), "error: " + r.error[:60], "", "", "", "", "", "", "", ""]
            )
            continue
        exact = "yes" if r.exact else (f"no ({r.max_abs_diff:.3g})" if r.exact is False else "-")
        exact = "-" if smoke else exact + (", varies" if r.repeatable is False else "")  # its own runs differ
        lines.append([
            r.family, r.resolution, mode_label(r), f"{r.denoise_s:.3f}",
            f"{r.speedup:.2f}x" if r.speedup and not smoke else "-",
            f"{r.kernel_s:.3f}" if r.kernel_s else "-", f"{r.busy:.2f}" if r.busy else "-",
            f"{r.first_run_s:.1f}" if r.first_run_s else "-",
            f"{r.peak_allocated_gib:.1f}" if r.peak_allocated_gib is not None else "-", exact,
            {True: "yes", False: "NO"}.get(r.equals_without_bcg, "-"), r.replayed or "-",
        ])  # fmt: skip
    return render_columns(lines)


def render_columns(lines: list[list[Any]]) -> str:
    """``lines`` (a header first) as ``|``-separated columns padded to their widest cell."""
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(lines[0]))]
    return "\n".join(" | ".join(str(c).ljust(w) for c, w in zip(line, widths)) for line in lines)


def _or_dash(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def format_kernel_split(rows: list[Row]) -> str:
    """One line per profiled row: GPU seconds of one denoise per kernel kind, kinds as columns, and
    the SM clock and power of the timed runs where they were sampled."""
    profiled = [r for r in rows if r.kernel_split]
    kinds = [k for k, _ in KERNEL_KINDS if any(k in r.kernel_split for r in profiled)]
    kinds += sorted({k for r in profiled for k in r.kernel_split} - set(kinds))
    clocked = any(r.sm_clock_mhz is not None for r in profiled)
    lines = [["model", "res", "mode", *kinds, "total", *(("SM MHz", "power W") if clocked else ())]]
    for r in profiled:
        clock = (_or_dash(r.sm_clock_mhz), _or_dash(r.power_w)) if clocked else ()
        lines.append(
            [
                r.family,
                r.resolution,
                mode_label(r),
                *(f"{r.kernel_split.get(k, 0.0):.3f}" for k in kinds),
                f"{r.kernel_s:.3f}",
                *clock,
            ]
        )
    return render_columns(lines)


def format_host_profiles(rows: list[Row], top: int = 3) -> str:
    """Per profiled row: its Python calls and own time in one denoise, and its costliest functions."""
    lines = []
    for r in (r for r in rows if r.host_top is not None):
        costliest = ", ".join(f"{f['function']} {f['tottime']:.3f} s" for f in r.host_top[:top])
        lines.append(
            f"{r.family} | {r.resolution} | {mode_label(r)} | {r.host_calls} calls, {r.host_python_s:.3f} s | {costliest}"
        )
    return "\n".join(lines)


def format_warmup_costs(env: dict) -> list[str]:
    """One line per ``--warmup-cost`` measurement of a run's ``env``."""
    lines = []
    for cost in env.get("warmup_cost", []):
        outcome = cost.get("error") or f"{cost['seconds']} s, {cost['captured']} graphs captured"
        lines.append(f"{env['family']} warm-up {cost['mode']} of {cost['plan']}: {outcome}")
    return lines


def write_json(path: str, env: dict, rows: list[Row]) -> None:
    with open(path, "w") as f:
        json.dump({"env": env, "rows": [asdict(r) for r in rows]}, f, indent=2)
