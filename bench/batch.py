"""Batch benchmark: a job of many prompts and sizes with no warm-up at all, BCG vs eager.

    python -m bench.batch --family qwen_image --prompts 100 \\
        --sizes 512x512,768x512,512x768 --json batch.json

A batch longer than one process may run (Qwen-Image's 100 jobs on a device with a 10-minute
limit per command) runs in parts: ``--jobs 0-50`` and ``--jobs 50-100`` run those jobs of the same
batch (prompts, sizes and seeds as the whole one draws them), each in a fresh process, so BCG
captures again in each part; ``python -m bench.batch --merge a.json b.json`` adds the parts up.

What a headless batch job meets: every prompt has its own length (drawn from a realistic spread,
10 to 200 tokens, seeded), sizes rotate, and BCG Apply runs with its defaults (capture on first
call, graph memory budget = half the VRAM free after load). Each job is sampled with BCG and
eagerly with the same inputs, back to back in one process (which goes first alternates), so the
speedup is a ratio of the same work on the same machine state and every BCG image is compared bit
for bit with its eager twin.

Reported: share of DiT calls replayed, end-to-end speedup (sum of eager seconds / sum of BCG
seconds), captures, evictions, mean capture seconds (the first-call overhead of a new signature,
beside the mean eager DiT call), graph memory after every job (the curve) and its peak, and how
many images were bit-equal to eager.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import logging
import math
import pstats
import random
import statistics
import sys
from dataclasses import asdict, dataclass

from .bookkeeping import hook_times, sampling_split
from .measure import timed_sample
from .setup import DEFAULTS, setup_comfyui

log = logging.getLogger("bench.batch")
NEGATIVE_LENGTH = 12  # a short fixed negative prompt, as most workflows have


def prompt_lengths(n: int, seed: int, low: int = 10, high: int = 200) -> list[int]:
    """``n`` token counts from a log-normal spread (median about 60) clipped to [low, high]:
    short tag lists to long descriptive prompts, as prompt collections look."""
    rng = random.Random(seed)
    return [min(high, max(low, round(rng.lognormvariate(math.log(60), 0.6)))) for _ in range(n)]


@dataclass
class Job:
    index: int
    width: int
    height: int
    tokens: int
    seed: int
    prompt: int = 0
    bcg_s: float = 0.0
    eager_s: float = 0.0
    calls: int = 0
    replayed: int = 0
    captures_total: int = 0
    evictions_total: int = 0
    graph_mib: float = 0.0
    reserved_mib: float = 0.0
    exact: bool | None = None
    #: Host seconds of each side's sampling in ComfyUI's model load and in DiT calls (the rest of
    #: ``*_s`` is the sampler, conditioning and BCG's per-run hooks, and where calls replay, the
    #: wait for the device they queued).
    eager_load_s: float = 0.0
    eager_dit_s: float = 0.0
    bcg_load_s: float = 0.0
    bcg_dit_s: float = 0.0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.batch", description=__doc__.split("\n\n")[0])
    p.add_argument("--comfyui", default=None, help="ComfyUI folder (default: $COMFYUI_PATH)")
    p.add_argument("--family", default="zimage", choices=sorted(DEFAULTS))
    p.add_argument("--prompts", type=int, default=100, help="number of distinct prompts (default 100)")
    p.add_argument(
        "--seeds",
        type=int,
        default=1,
        help="seeds per prompt (default 1): jobs = prompts x seeds, prompt by prompt as a job spec expands",
    )
    p.add_argument("--sizes", default="512x512,768x512,512x768", help="WIDTHxHEIGHT list, rotated over the jobs")
    p.add_argument("--steps", type=int, default=None, help="sampling steps (default: the family's)")
    p.add_argument("--cfg", type=float, default=None, help="cfg (default: the family's)")
    p.add_argument("--depth", type=int, default=None, help="blocks per stack (default: full)")
    p.add_argument("--memory-budget-mb", type=int, default=0, help="BCG Apply's graph memory budget (0 = its default)")
    p.add_argument("--seed", type=int, default=0, help="seed of the prompt-length draw and the noise")
    p.add_argument("--json", default=None, help="write every job and the summary here")
    p.add_argument(
        "--profile-first",
        default=None,
        metavar="PATH",
        help="profile the first BCG job (the process's first capture) with cProfile and write the "
        "functions by cumulative time to PATH",
    )
    p.add_argument(
        "--jobs",
        default=None,
        metavar="START-STOP",
        help="run jobs START to STOP-1 of the batch only (a part of a batch: see the module docstring)",
    )
    p.add_argument(
        "--merge", nargs="+", default=None, metavar="JSON", help="add up parts written with --json and print the totals"
    )
    args = p.parse_args(argv)
    if args.jobs is not None:
        try:
            start, stop = (int(v) for v in args.jobs.split("-"))
        except ValueError:
            p.error(f"--jobs {args.jobs!r}: give START-STOP, e.g. 0-50")
        if not 0 <= start < stop:
            p.error(f"--jobs {args.jobs!r}: START must be at least 0 and below STOP")
        args.jobs = (start, stop)
    return args


def run(args: argparse.Namespace) -> tuple[list[Job], dict]:
    import os

    import torch

    from bcg_runtime.comfy import api
    from bcg_runtime.plan import PlanError, parse_resolutions

    from . import synthetic

    comfy_version = setup_comfyui(args.comfyui or os.environ.get("COMFYUI_PATH"))
    if not torch.cuda.is_available():
        raise SystemExit("batch_bench measures graph replay: it needs a CUDA GPU")
    try:
        sizes = parse_resolutions(args.sizes)
    except PlanError as e:
        raise SystemExit(f"--sizes: {e}") from None
    steps, cfg = DEFAULTS[args.family]
    steps, cfg = args.steps or steps, cfg if args.cfg is None else args.cfg
    model = synthetic.load_model(args.family, depth=args.depth, seed=0, device="cuda")
    bcg = api.apply(model, "auto", memory_budget_mb=args.memory_budget_mb)
    session = api.session_of(bcg)
    negative = synthetic.make_conditioning(args.family, NEGATIVE_LENGTH, seed=10**6)
    jobs = [
        Job(p * args.seeds + k, *sizes[p % len(sizes)], tokens=n, seed=args.seed * 10**4 + p * args.seeds + k, prompt=p)
        for p, n in enumerate(prompt_lengths(args.prompts, args.seed))
        for k in range(args.seeds)
    ]
    if args.jobs is not None:
        jobs = jobs[slice(*args.jobs)]
        if not jobs:
            raise SystemExit(f"--jobs {args.jobs[0]}-{args.jobs[1]}: the batch has {args.prompts * args.seeds} jobs")

    def timed(m, job, positive):
        out = timed_sample(m, args.family, (job.width, job.height), steps, cfg, positive, negative, seed=job.seed)
        side = "bcg" if m is bcg else "eager"
        load_s, dit_s, _ = split.take()
        setattr(job, f"{side}_load_s", load_s)
        setattr(job, f"{side}_dit_s", dit_s)
        return out

    with sampling_split(model) as split:
        # Load the model before the clock starts (the first sampling of either model would pay it).
        timed(model, Job(-1, *sizes[0], tokens=NEGATIVE_LENGTH, seed=0), negative)
        with hook_times(bcg) as hook:
            sample_all(jobs, timed, bcg, model, session, args)
    return jobs, _summary(jobs, session, hook, args, steps, cfg, comfy_version)


def sample_all(jobs: list[Job], timed, bcg, model, session, args) -> None:
    """Each job with BCG and eagerly, back to back; the job records both and their equality. The
    first of the two pays what a process does once per shape (a kernel's first launch at a new
    size, the allocator growing), so odd jobs run eager first and even jobs BCG first."""
    import torch

    from . import synthetic

    for job in jobs:
        positive = synthetic.make_conditioning(args.family, job.tokens, seed=job.prompt)
        if job.index % 2:
            eager, job.eager_s = timed(model, job, positive)
        if job is jobs[0] and args.profile_first:
            with profiled(args.profile_first):
                out, job.bcg_s = timed(bcg, job, positive)
        else:
            out, job.bcg_s = timed(bcg, job, positive)
        run_stats = session.last_run or {}
        job.calls, job.replayed = run_stats.get("calls", 0), run_stats.get("replayed", 0)
        job.captures_total, job.evictions_total = session.runner.stats.captures, session.runner.stats.evictions
        job.graph_mib = session.runner.memory_bytes / 2**20
        job.reserved_mib = torch.cuda.memory_reserved() / 2**20
        if not job.index % 2:
            eager, job.eager_s = timed(model, job, positive)
        job.exact = torch.equal(out, eager)
        log.info("[BCG] job %d %dx%d txt%d: bcg %.2fs eager %.2fs, replayed %d/%d, graphs %.0f MiB, exact %s",
                 job.index, job.width, job.height, job.tokens, job.bcg_s, job.eager_s, job.replayed, job.calls,
                 job.graph_mib, job.exact)  # fmt: skip


@contextlib.contextmanager
def profiled(path: str):
    """cProfile the block; write its 60 costliest functions by cumulative time to ``path``."""
    profile = cProfile.Profile()
    profile.enable()
    try:
        yield
    finally:
        profile.disable()
        with open(path, "w") as f:
            pstats.Stats(profile, stream=f).sort_stats("cumulative").print_stats(60)


def left_eager_split(jobs: list[Job]) -> dict:
    """Over the jobs where BCG replayed nothing: how many, how many of them captured a graph, and
    the median of BCG's minus eager's host milliseconds per job, in all, in ComfyUI's model load,
    in DiT calls (BCG's hook included) and in the rest (sampler, conditioning, BCG's per-run
    hooks); and in all over the jobs that captured nothing (BCG's cost where it only looked on).
    ``jobs`` in the order they ran (a job's captures are the growth of ``captures_total``)."""
    captured, before = set(), 0
    for j in jobs:
        if j.captures_total > before:
            captured.add(j.index)
        before = j.captures_total
    left = [j for j in jobs if j.calls and not j.replayed]
    if not left:
        return {"left_eager_jobs": 0}
    plain = [j for j in left if j.index not in captured]

    def median_ms(bcg, eager, over=left) -> float | None:
        return round(1000 * statistics.median(bcg(j) - eager(j) for j in over), 2) if over else None

    return {
        "left_eager_jobs": len(left),
        "left_eager_capturing_jobs": len(left) - len(plain),
        "left_eager_extra_ms": median_ms(lambda j: j.bcg_s, lambda j: j.eager_s),
        "left_eager_extra_load_ms": median_ms(lambda j: j.bcg_load_s, lambda j: j.eager_load_s),
        "left_eager_extra_dit_ms": median_ms(lambda j: j.bcg_dit_s, lambda j: j.eager_dit_s),
        "left_eager_extra_rest_ms": median_ms(
            lambda j: j.bcg_s - j.bcg_load_s - j.bcg_dit_s, lambda j: j.eager_s - j.eager_load_s - j.eager_dit_s
        ),
        "left_eager_plain_extra_ms": median_ms(lambda j: j.bcg_s, lambda j: j.eager_s, over=plain),
    }


def replay_ceiling(jobs: list[Job]) -> dict:
    """What exact replay can give this batch at most: each size's median eager and BCG seconds
    over its jobs that replayed every call, and the end-to-end speed-up were every job that fast
    (no capture, no eager call): None where some size has no such job. The gap between it and the
    measured speed-up is what captures and calls left eager cost."""
    sizes: dict[str, list[Job]] = {}
    for job in jobs:
        sizes.setdefault(f"{job.width}x{job.height}", []).append(job)
    replayed = {size: [j for j in group if j.calls and j.replayed == j.calls] for size, group in sizes.items()}
    per_size = {
        size: [round(statistics.median(j.eager_s for j in full), 3), round(statistics.median(j.bcg_s for j in full), 3)]
        for size, full in replayed.items()
        if full
    }
    ceiling = None
    if per_size and len(per_size) == len(sizes):
        at_best = sum(per_size[size][1] * len(group) for size, group in sizes.items())
        ceiling = round(sum(j.eager_s for j in jobs) / max(at_best, 1e-9), 3)
    return {"replayed_jobs_s": per_size, "replay_ceiling": ceiling}


def capture_phases(entries) -> dict[str, float] | None:
    """The median of each phase of the held entries' captures and proofs (ms), the earliest held
    left out (the process's first capture, unless evicted, carries the device's one-time
    initialisation): where the cost a capture must repay goes."""
    timed = [e for e in entries if e.phases is not None and e.proof is not None][1:]
    if not timed:
        return None
    phases = {name: [1000 * getattr(e.phases, name) for e in timed] for name in timed[0].phases._fields}
    phases |= {f"proof_{name}": [1000 * getattr(e.proof, name) for e in timed] for name in ("eager", "replay")}
    return {name: round(statistics.median(values), 1) for name, values in phases.items()}


def _summary(jobs, session, hook, args, steps, cfg, comfy_version) -> dict:
    import torch

    stats = session.runner.stats
    calls = sum(j.calls for j in jobs)
    summary = {
        "family": args.family, "depth": args.depth or "full", "steps": steps, "cfg": cfg, "sizes": args.sizes,
        "prompts": args.prompts, "seeds": args.seeds, "jobs": len(jobs), "job_range": [jobs[0].index, jobs[-1].index + 1], "token_range": [min(j.tokens for j in jobs), max(j.tokens for j in jobs)],
        "distinct_lengths": len({j.tokens for j in jobs}),
        "dit_calls": calls, "replayed": sum(j.replayed for j in jobs),
        "replayed_share": round(sum(j.replayed for j in jobs) / max(calls, 1), 4),
        "eager_s": round(sum(j.eager_s for j in jobs), 2), "bcg_s": round(sum(j.bcg_s for j in jobs), 2),
        "captures": stats.captures, "evictions": stats.evictions,
        "mean_capture_s": round(stats.capture_seconds / max(stats.captures, 1), 3),
        "capture_phases_ms": capture_phases(session.runner.entries()),
        "mean_eager_call_s": round(sum(j.eager_s for j in jobs) / max(calls, 1), 4),
        "peak_graph_mib": round(max(j.graph_mib for j in jobs), 1),
        "memory_budget_mib": round((session.runner.limits.memory_budget_bytes or 0) / 2**20, 1),
        "exact": sum(bool(j.exact) for j in jobs),
        "gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "comfyui": comfy_version,
        **hook.summary(),
        **left_eager_split(jobs),
        **replay_ceiling(jobs),
    }  # fmt: skip
    summary["speedup"] = round(summary["eager_s"] / max(summary["bcg_s"], 1e-9), 3)
    return summary


def _ceiling(s: dict) -> str:
    """:func:`replay_ceiling`'s figures in a line's words."""
    if not s.get("replay_ceiling"):
        return "no ceiling (a size has no job that replayed whole)"
    return (
        f"were every job replayed whole {s['replay_ceiling']:.2f}x (per size, median eager / BCG s of "
        f"such jobs: {s['replayed_jobs_s']})"
    )


def format_summary(jobs: list[Job], s: dict) -> str:
    curve = ", ".join(f"{j.index + 1}:{j.graph_mib:.0f}" for j in jobs if (j.index + 1) % 10 == 0 or j.index == 0)
    return "\n".join([
        f"{s['family']} depth={s['depth']} steps={s['steps']} cfg={s['cfg']} sizes={s['sizes']} on {s['gpu']}, "
        f"torch {s['torch']}, ComfyUI {s['comfyui']}",
        f"{s['jobs']} jobs: {s['prompts']} prompts x {s['seeds']} seeds, {s['token_range'][0]}-{s['token_range'][1]} tokens "
        f"({s['distinct_lengths']} distinct lengths)",
        f"DiT calls replayed: {s['replayed']}/{s['dit_calls']} ({100 * s['replayed_share']:.1f}%)",
        f"end to end: eager {s['eager_s']:.1f}s, BCG {s['bcg_s']:.1f}s, speedup {s['speedup']:.2f}x; {_ceiling(s)}",
        f"captures {s['captures']} (mean {s['mean_capture_s']:.2f}s each; a plain eager DiT call "
        f"{1000 * s['mean_eager_call_s']:.0f} ms), evictions {s['evictions']}; a capture's phases and proof, "
        f"median ms: {s.get('capture_phases_ms')}",
        f"BCG's host time beyond the forward: {s['bookkeeping_ms_mean']} ms mean ({s['bookkeeping_ms_median']} median, "
        f"{s['bookkeeping_ms_p99']} p99, {s['bookkeeping_gc_ms_mean']} ms mean of garbage collection) per eager call "
        f"({s['eager_calls']}); {s['replay_host_ms_median']} ms median per replay"
        + "".join(f"\n    {c['ms']} ms ({c['gc_ms']} gc): {c['reason']}" for c in s.get("bookkeeping_slowest", [])[:3])
        if s["bookkeeping_measured"]
        else "BCG's host time beyond the forward: not measured (this DiT has no _forward: no wrapper can time it)",
        f"jobs BCG left eager: {s['left_eager_jobs']}"
        + (f" ({s['left_eager_capturing_jobs']} captured a graph), BCG minus eager per job (median ms): "
           f"{s['left_eager_extra_ms']} in all, {s['left_eager_extra_load_ms']} model load, "
           f"{s['left_eager_extra_dit_ms']} DiT calls, {s['left_eager_extra_rest_ms']} the rest; "
           f"{s['left_eager_plain_extra_ms']} in the jobs that captured nothing" if s["left_eager_jobs"] else ""),
        f"graph memory MiB after job n (budget {s['memory_budget_mib']:.0f}): {curve}; peak {s['peak_graph_mib']:.0f}",
        f"bit-equal to eager: {s['exact']}/{s['jobs']} images",
    ])  # fmt: skip


#: What every part of one batch has in common (``merge``).
SAME_BATCH = ("family", "depth", "steps", "cfg", "sizes", "prompts", "seeds", "gpu", "torch", "comfyui")


def merge(parts: list[dict]) -> dict:
    """The totals of a batch run in parts (each ``{"summary", "jobs"}`` as ``--json`` writes it):
    raises ValueError for parts of different batches or parts that overlap."""
    first = parts[0]["summary"]
    for part in parts[1:]:
        differ = [k for k in SAME_BATCH if part["summary"].get(k) != first.get(k)]
        if differ:
            raise ValueError(f"parts of different batches: {', '.join(differ)} differ")
    jobs = sorted((j for part in parts for j in part["jobs"]), key=lambda j: j["index"])
    indexes = [j["index"] for j in jobs]
    if len(set(indexes)) != len(indexes):
        raise ValueError("parts overlap: a job was run twice")
    eager_s, bcg_s = sum(j["eager_s"] for j in jobs), sum(j["bcg_s"] for j in jobs)
    return {
        **{k: first.get(k) for k in SAME_BATCH},
        "parts": len(parts), "jobs": len(jobs), "of_jobs": first["prompts"] * first["seeds"],
        "dit_calls": sum(j["calls"] for j in jobs), "replayed": sum(j["replayed"] for j in jobs),
        "eager_s": round(eager_s, 2), "bcg_s": round(bcg_s, 2), "speedup": round(eager_s / max(bcg_s, 1e-9), 3),
        "captures": sum(part["summary"]["captures"] for part in parts),
        "exact": sum(bool(j["exact"]) for j in jobs),
        **replay_ceiling([Job(**j) for j in jobs]),
    }  # fmt: skip


def format_merged(m: dict) -> str:
    return "\n".join([
        f"{m['family']} depth={m['depth']} steps={m['steps']} cfg={m['cfg']} sizes={m['sizes']} on {m['gpu']}, "
        f"torch {m['torch']}, ComfyUI {m['comfyui']}: {m['jobs']} of {m['of_jobs']} jobs in {m['parts']} parts "
        "(each a fresh process)",
        f"DiT calls replayed: {m['replayed']}/{m['dit_calls']}; captures {m['captures']}",
        f"end to end: eager {m['eager_s']:.1f}s, BCG {m['bcg_s']:.1f}s, speedup {m['speedup']:.2f}x; {_ceiling(m)}",
        f"bit-equal to eager: {m['exact']}/{m['jobs']} images",
    ])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    args = parse_args(argv)
    if args.merge:
        parts = []
        for path in args.merge:
            with open(path) as f:
                parts.append(json.load(f))
        try:
            merged = merge(parts)
        except ValueError as e:
            raise SystemExit(f"--merge: {e}") from None
        print(format_merged(merged))
        return 0 if merged["exact"] == merged["jobs"] else 1
    jobs, summary = run(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "jobs": [asdict(j) for j in jobs]}, f, indent=2)
    print(format_summary(jobs, summary))
    return 0 if summary["exact"] == summary["jobs"] else 1


if __name__ == "__main__":
    sys.exit(main())
