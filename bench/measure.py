"""Measuring the benchmark's rows: each mode samples the same model with the same seed and prompts;
per row the median denoise seconds, kernel time by kind (profiler), the Python side (cProfile),
clocks and power, peak memory, and exactness against eager and against the same stack without
BCG."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import statistics
import sys
import time
from typing import Any

from .gpu_clocks import ClockSampler
from .modes import (
    BCG_MODES,
    COMPILE_STACK,
    prepare_mode,
    reference_mode,
    split_mode,
    split_warmup_plan,
    stacked,
    warmup_cost,
)
from .report import Row, format_table, kernel_summary, mode_label, size_text, write_json
from .setup import (
    CPU_NOTE,
    DEFAULTS,
    comfy_kitchen_version,
    default_prompt_lengths,
    load_bench_model,
    phase,
    setup_comfyui,
)

log = logging.getLogger(__name__)


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed_sample(model, family, res, steps, cfg, positive, negative, seed: int = 0) -> tuple[Any, float]:
    """(latent, wall seconds) of one KSampler-path sampling, the device synchronised around it."""
    from . import synthetic

    _sync()
    start = time.perf_counter()
    frames = res[2] if len(res) > 2 else None  # (width, height[, frames]): frames for video families
    out = synthetic.sample(model, family, res[0], res[1], steps, cfg, positive, negative, seed=seed, frames=frames)
    _sync()
    return out, time.perf_counter() - start


def kernel_seconds(model, family, res, steps, cfg, positive, negative) -> tuple[float, dict[str, float], list[dict]]:
    """:func:`kernel_summary` of one profiled denoise."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        timed_sample(model, family, res, steps, cfg, positive, negative)
    return kernel_summary(prof.key_averages())


def host_profile(model, family, res, steps, cfg, positive, negative, top: int) -> tuple[list[dict], int, float]:
    """(the ``top`` functions by own time, function calls, summed own seconds) of one denoise
    under cProfile: the Python side of a mode, which the kernel profile cannot see."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    try:
        timed_sample(model, family, res, steps, cfg, positive, negative)
    finally:
        profiler.disable()
    stats = pstats.Stats(profiler)
    functions = [
        {
            "function": f"{os.path.basename(file)}:{line}({name})",
            "calls": calls,
            "tottime": round(tt, 4),
            "cumtime": round(ct, 4),
        }
        for (file, line, name), (_, calls, tt, ct, _) in stats.stats.items()
    ]
    functions.sort(key=lambda f: f["tottime"], reverse=True)
    return functions[:top], stats.total_calls, round(stats.total_tt, 4)


def run(args: argparse.Namespace) -> tuple[list[Row], dict]:
    import torch

    from bcg_runtime.core import one_line
    from bcg_runtime.plan import PlanError, parse_sizes

    from . import synthetic

    comfy_version = setup_comfyui(args.comfyui)
    cuda = torch.cuda.is_available()
    steps, cfg = DEFAULTS[args.family]
    steps = args.steps or (steps if cuda else 2)
    cfg = args.cfg if args.cfg is not None else cfg
    depth = args.depth if args.depth is not None else (None if cuda else 1)
    try:
        resolutions = parse_sizes(args.resolutions or ("512x512" if cuda else "128x128"))
    except PlanError as e:
        raise SystemExit(f"--{e}") from None
    try:
        references = [(w, h) for w, h, _ in parse_sizes(args.references)] if args.references else []
    except PlanError as e:
        raise SystemExit("--references: " + str(e).split(": ", 1)[1]) from None
    modes = (args.modes or ("eager,bcg,bcg-full,compile-cudagraphs" if cuda else "eager")).split(",")
    for mode in modes:
        split_mode(mode)
    if args.warmup_cost:
        split_warmup_plan(args.warmup_cost)
    if not cuda:
        log.warning("[BCG] %s", CPU_NOTE)
        modes = ["eager"]
    if args.prompt_lengths:
        cond_len, uncond_len = (int(v) for v in args.prompt_lengths.split(","))
    else:
        cond_len, uncond_len = default_prompt_lengths(args.family)
    env = {
        "date": time.strftime("%Y-%m-%d"),
        "gpu": torch.cuda.get_device_name() if cuda else "none (CPU)",
        "torch": torch.__version__,
        "comfyui": comfy_version,
        "comfy_kitchen": comfy_kitchen_version(),
        "family": args.family,
        "depth": depth or "full",
        "weight_dtype": args.weight_dtype,
        "steps": steps,
        "cfg": cfg,
        "prompt_lengths": [cond_len, uncond_len],
        "command": "python -m bench " + " ".join(sys.argv[1:]),
        "note": None if cuda else CPU_NOTE,
    }
    t0 = time.perf_counter()
    with phase(f"building a random-weight {args.family} (depth {depth or 'full'})"):
        model = load_bench_model(args.family, depth, args.weight_dtype, "cuda" if cuda else None)
    env["model_build_s"] = round(time.perf_counter() - t0, 2)
    positive = synthetic.make_conditioning(args.family, cond_len, seed=1)
    negative = synthetic.make_conditioning(args.family, uncond_len, seed=2)
    if references:
        refs = [synthetic.make_reference_latent(args.family, w, h, seed=100 + i) for i, (w, h) in enumerate(references)]
        positive, negative = (
            synthetic.with_reference_latents(positive, refs),
            synthetic.with_reference_latents(negative, refs),
        )
        env["references"] = [size_text(r) for r in references]  # the JSON says it was an edit workflow

    rows: list[Row] = []
    for res in resolutions:
        reference = None
        eager_median = None
        outputs: dict[str, Any] = {}
        for mode in modes:
            row = Row(args.family, size_text(res), mode, steps, cfg, again=mode in outputs)
            rows.append(row)
            try:
                measure_row(row, mode, model, args, res, positive, negative, cuda)
            except Exception as e:  # one broken mode must not hide the others' numbers
                row.error = one_line(e)
                log.error("[BCG] bench %s %s failed: %s", mode, row.resolution, row.error)
                continue
            out = row.__dict__.pop("_out")
            if mode == "eager":
                reference, eager_median = out, row.denoise_s
                row.exact, row.max_abs_diff = True, 0.0
            elif reference is not None:
                row.exact = bool(torch.equal(out, reference))
                row.max_abs_diff = 0.0 if row.exact else float((out.float() - reference.float()).abs().max())
            if eager_median:
                row.speedup = eager_median / row.denoise_s
            reference_of_row = reference_mode(mode, outputs)
            if reference_of_row is not None:
                row.equals_without_bcg = bool(torch.equal(out, outputs[reference_of_row]))
            outputs.setdefault(mode, out)
            # Each row as it completes: a run cut short by a time limit keeps the rows it measured.
            log.info("[BCG] row: %s", format_table([row]).splitlines()[-1])
            if args.json:
                write_json(args.json, env, rows)
    if args.warmup_cost:
        env["warmup_cost"] = []
        for mode in (m for m in modes if split_mode(m)[1] in BCG_MODES):
            with phase(f"{mode}: warm-up of {args.warmup_cost} on a fresh BCG model"):
                try:
                    env["warmup_cost"].append(warmup_cost(model, mode, args.warmup_cost))
                except Exception as e:
                    env["warmup_cost"].append(
                        {"mode": mode, "plan": args.warmup_cost, "error": f"{type(e).__name__}: {e}"[:300]}
                    )
    return rows, env


def measure_row(row: Row, mode, model, args, res, positive, negative, cuda) -> None:
    """One mode's row, its stacked tools in place for all of it."""
    with stacked(mode, model) as (model, base):
        _measure_base_mode(row, base, model, args, res, positive, negative, cuda)


def _measure_base_mode(row: Row, mode, model, args, res, positive, negative, cuda) -> None:
    import torch
    from tqdm import tqdm

    family, steps, cfg = row.family, row.steps, row.cfg
    with phase(f"{row.resolution} {mode_label(row)}: preparing (warm-up capture / compile on the first run)"):
        m, first_run, session = prepare_mode(mode, model, family, res, positive, negative)
        _, warm = timed_sample(m, family, res, steps, cfg, positive, negative)  # also the compile run
    row.first_run_s = warm if first_run < 0 else first_run
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    out = None
    clocks = (
        ClockSampler(torch.cuda.get_device_properties(torch.cuda.current_device()).uuid)
        if cuda
        else contextlib.nullcontext()
    )
    first, same_as_first = None, []
    with clocks:
        for _ in tqdm(
            range(max(1, args.repeats)), desc=f"{row.resolution} {mode_label(row)}", unit="run", file=sys.stderr
        ):
            out, seconds = timed_sample(m, family, res, steps, cfg, positive, negative)
            row.runs_s.append(seconds)
            if first is None:
                first = out.clone()
            else:
                same_as_first.append(bool(torch.equal(out, first)))
    row.repeatable = all(same_as_first) if same_as_first else None  # one run proves nothing
    if cuda and clocks.reading is not None:
        row.sm_clock_mhz, row.power_w = round(clocks.reading.sm_clock_mhz), round(clocks.reading.power_w)
    row.denoise_s = statistics.median(row.runs_s)
    if cuda:
        row.peak_allocated_gib = torch.cuda.max_memory_allocated() / 2**30
        row.peak_reserved_gib = torch.cuda.max_memory_reserved() / 2**30
        if not args.no_profile:
            row.kernel_s, row.kernel_split, row.top_kernels = kernel_seconds(
                m, family, res, steps, cfg, positive, negative
            )
            row.busy = row.kernel_s / row.denoise_s
    if args.host_profile > 0:
        row.host_top, row.host_calls, row.host_python_s = host_profile(
            m, family, res, steps, cfg, positive, negative, args.host_profile
        )
    if session is not None and session.last_run:
        row.replayed = f"{session.last_run['replayed']}/{session.last_run['calls']}"
        row.eager_reasons = dict(session.last_run["eager"]) or None
    row.__dict__["_out"] = out.cpu()
    # Give the next mode a clean device: this mode's graphs and compiled code go.
    if session is not None:
        session.runner.reset()
    if mode == "fast" or any(tool in COMPILE_STACK for tool in row.mode.split("+")):
        torch._dynamo.reset()
    if cuda:
        torch.cuda.empty_cache()
