"""The server benchmark's arithmetic: one prompt's timings from its websocket messages, and the
per-variant summary over N prompts. Plain Python (no torch, no ComfyUI), unit-tested on its own.

Messages are ``(seconds since the prompt was queued, type, data)`` as ``bench.comfy_ws.Run``
records them. ComfyUI sends ``progress`` after each finished sampler step, so the first
``progress`` of the KSampler marks the end of step 1: the steps between the first and the last one
run at the steady rate (:func:`denoise`), while step 1 also carries what the sampler does once
(load the model to the device, build BCG's fixed-address twin, capture a graph), which
:func:`prompt_timings` reports as ``sampler_setup_s``.
"""

from __future__ import annotations

import statistics

Message = tuple[float, str, dict]


def sampler_progress(messages: list[Message], node_id: str) -> list[tuple[float, int, int]]:
    """``(time, value, max)`` of the ``progress`` messages of node ``node_id``, from its last
    sampling pass (a value that goes back starts a new pass)."""
    out: list[tuple[float, int, int]] = []
    for t, kind, data in messages:
        if kind != "progress" or str(data.get("node")) != str(node_id):
            continue
        value, total = int(data["value"]), int(data["max"])
        if out and value <= out[-1][1]:
            out = []
        out.append((t, value, total))
    return out


def denoise(messages: list[Message], node_id: str) -> dict:
    """The denoise of node ``node_id`` (the KSampler) from its progress messages: ``steps`` (its
    ``max``), the times of the first and the last progress and ``progress_span_s`` between them
    (steps 2..N, as measured), ``step_s`` (that span per step) and ``denoise_s`` (``step_s`` x
    ``steps``: the whole denoise at the steady rate, comparable with the in-process benchmark's);
    the seconds are None with fewer than two progress messages."""
    progress = sampler_progress(messages, node_id)
    keys = ("first_progress_s", "last_progress_s", "progress_span_s", "step_s", "denoise_s")
    out = {"steps": progress[-1][2] if progress else None, **dict.fromkeys(keys)}
    if len(progress) < 2:
        return out
    (t0, v0, _), (t1, v1, total) = progress[0], progress[-1]
    step = (t1 - t0) / (v1 - v0)
    out.update(first_progress_s=t0, last_progress_s=t1, progress_span_s=t1 - t0, step_s=step, denoise_s=step * total)
    return out


def node_seconds(messages: list[Message]) -> dict[str, float]:
    """Seconds per executed node id: from its ``executing`` message to the next one (the last node
    ends at the ``executing`` with node None)."""
    marks = [(t, data.get("node")) for t, kind, data in messages if kind == "executing"]
    out: dict[str, float] = {}
    for (t, node), (t_next, _) in zip(marks, marks[1:]):
        if node is not None:
            out[str(node)] = out.get(str(node), 0.0) + (t_next - t)
    return out


def node_start(messages: list[Message], node_id: str) -> float | None:
    """When node ``node_id`` started executing (its first ``executing`` message), or None."""
    return next(
        (t for t, kind, data in messages if kind == "executing" and str(data.get("node")) == str(node_id)), None
    )


def prompt_timings(messages: list[Message], wall_s: float, sampler_id: str) -> dict:
    """One prompt's timings: ``wall_s`` (queue to end, given), the :func:`denoise` fields,
    ``outside_s`` (wall minus the steady-rate denoise: loaders, the BCG nodes, what the sampler does
    once, saving, HTTP), ``sampler_setup_s`` (from the KSampler's start to its first progress, less
    one steady step: model load, twin, capture) and ``nodes_s`` (:func:`node_seconds`).

    ``outside_s`` and ``sampler_setup_s`` rest on the steady rate: with few steps whose times vary
    (a busy CPU) they can come out slightly negative; ``progress_span_s`` is measured as is."""
    out = {
        "wall_s": wall_s,
        **denoise(messages, sampler_id),
        "outside_s": None,
        "sampler_setup_s": None,
        "nodes_s": node_seconds(messages),
    }
    if out["denoise_s"] is not None:
        out["outside_s"] = wall_s - out["denoise_s"]
        start = node_start(messages, sampler_id)
        if start is not None:
            out["sampler_setup_s"] = out["first_progress_s"] - start - out["step_s"]
    return out


def spread(values: list[float]) -> float | None:
    """``max / median`` of ``values`` (1.0 = flat), None when empty."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    median = statistics.median(values)
    return max(values) / median if median > 0 else None


def _median(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(prompts: list[dict], eager_median_wall: float | None = None) -> dict:
    """One variant at one size over its prompts (in order; each a record of ``bench.server``):
    the first prompt apart (``first_wall_s``; ``first_cost_s`` = its wall minus the median of the
    others), the others' medians (wall, denoise, outside) and spread (:func:`spread` of their walls:
    max / median), ``vs_eager`` (the eager variant's median wall over this one's), the bit-equality
    count, BCG's replayed/calls totals and eager reasons, the largest memory figures; against the
    bf16 eager latents where the prompts were measured so (``vs_bf16_eager``): how many, the
    largest max abs difference and the lowest PSNR; the median SM clock of prompts 2..N and the
    clock of the slowest of them (is the spread the GPU's pace?)."""
    steady = prompts[1:] if len(prompts) > 1 else prompts
    walls = [p["wall_s"] for p in steady]
    median_wall = _median(walls)
    equal = [p.get("bit_equal") for p in prompts if p.get("bit_equal") is not None]
    reasons: dict[str, int] = {}
    for p in prompts:
        for reason, n in (p.get("eager") or {}).items():
            reasons[reason] = reasons.get(reason, 0) + n
    diffs = [p["max_abs_diff"] for p in prompts if p.get("max_abs_diff") is not None]
    against_bf16 = [p["vs_bf16_eager"] for p in prompts if p.get("vs_bf16_eager")]
    psnrs = [f["psnr_db"] for f in against_bf16 if f["psnr_db"] is not None]

    def peak(key):
        values = [p[key] for p in prompts if p.get(key) is not None]
        return max(values) if values else None

    return {
        "prompts": len(prompts),
        "first_wall_s": prompts[0]["wall_s"] if prompts else None,
        "first_cost_s": prompts[0]["wall_s"] - median_wall if len(prompts) > 1 else None,
        "first_sampler_setup_s": prompts[0].get("sampler_setup_s") if prompts else None,
        "median_wall_s": median_wall,
        "max_wall_s": max(walls) if walls else None,
        "spread": spread(walls),
        "median_denoise_s": _median(p.get("denoise_s") for p in steady),
        "median_outside_s": _median(p.get("outside_s") for p in steady),
        "vs_eager": eager_median_wall / median_wall if eager_median_wall and median_wall else None,
        "bit_equal": sum(bool(e) for e in equal),
        "compared": len(equal),
        "max_abs_diff": max(diffs) if diffs else None,
        "vs_bf16_compared": len(against_bf16),
        "vs_bf16_max_abs": max((f["max_abs"] for f in against_bf16), default=None),
        "vs_bf16_min_psnr_db": min(psnrs, default=None),  # None: every latent identical to bf16's (or none compared)
        "calls": sum(p.get("calls") or 0 for p in prompts),
        "replayed": sum(p.get("replayed") or 0 for p in prompts),
        "eager_reasons": reasons,
        "peak_reserved_mib": peak("reserved_mib"),
        "peak_allocated_mib": peak("allocated_mib"),
        "peak_rss_mib": peak("rss_mib"),
        "median_sm_clock_mhz": _median(p.get("sm_clock_mhz") for p in steady),
        "slowest_sm_clock_mhz": max(steady, key=lambda p: p["wall_s"]).get("sm_clock_mhz") if steady else None,
    }
