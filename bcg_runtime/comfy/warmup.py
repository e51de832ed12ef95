"""Warm-up: capture every planned shape by sampling one step of it through ComfyUI itself.

Each planned shape (resolution x text length x batch) becomes a one-step ``comfy.sample.sample``
run with a conditioning of that length. ComfyUI then builds the DiT calls exactly as a KSampler
will (cond batching, CFG, dtype casts, extra conds), and the session's DIFFUSION_MODEL hook, in
capture mode, captures each signature it meets, replays it once and checks it equals eager. What
gets captured is therefore what sampling will ask for, not a guess of it.

A typed ``WIDTHxHEIGHTxFRAMES`` (video families) samples an empty video latent of that many pixel
frames (``api.warm_up`` has held the count to the model's temporal grid); video families
given no count sample one frame.

Batch ``b`` of the plan is the DiT's batch: ``1`` is a cfg-1 call (or one of cond/uncond run
apart); an even ``b`` is cond and uncond of equal length batched together (latent batch ``b/2``).

A connected LATENT (the workflow's own) adds one-step runs on that very latent with the workflow's
conditioning, at cfg 1 and, with a negative, at cfg > 1: exactly the calls its KSampler will send
(size, batch, frames, cond/uncond lengths and how ComfyUI batches them), with nothing typed.
"""

from __future__ import annotations

import gc
import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import torch

from ..core import one_line
from ..plan import WarmupPlan
from . import guards, sampling
from . import report as status_report
from .fast import NOT_BIT_EXACT
from .session import BCGSession, CaptureRecord

log = logging.getLogger(__name__)

#: CFG used when a warm-up step needs cond and uncond (any value > 1 makes ComfyUI run both).
WARMUP_CFG = 2.0


@dataclass
class WarmupJob:
    width: int
    height: int
    latent_batch: int
    cfg: float
    positive: Any
    negative: Any
    what: str
    #: The workflow's latent samples to start from (their shape is the call's), else an empty latent.
    latent: Any = None
    #: Pixel frames of the empty latent (video families), None: the family's default (one frame).
    frames: int | None = None

    @property
    def size(self) -> str:
        return f"{self.width}x{self.height}" if self.frames is None else f"{self.width}x{self.height}x{self.frames}"


@dataclass
class WarmupReport:
    model: str
    refusal: str | None = None
    records: list[CaptureRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: Peak allocated memory during the warm-up above what was resident after loading the model.
    peak_growth_mib: float = 0.0
    graph_mib: float = 0.0

    @property
    def captured(self) -> int:
        return sum(r.status == "captured" for r in self.records)

    def as_dict(self) -> dict:
        return asdict(self)

    def text(self) -> str:
        """The node's text output: one line per signature, then totals."""
        lines = [f"BCG warm-up, {self.model}"]
        if self.refusal:
            return "\n".join(lines + [f"off: {self.refusal}"])
        lines += [f"note: {n}" for n in self.notes]
        for r in self.records:
            if r.status in ("captured", "already captured"):
                exact = "exact" if r.exact else "unchecked"  # an entry that is not exact is never kept
                fast = (
                    f"; {NOT_BIT_EXACT}: max abs diff {r.eager_diff:g} from eager" if r.eager_diff is not None else ""
                )
                fast += f" ({r.eager_relative:.2%} of its norm)" if r.eager_relative is not None else ""
                lines.append(
                    f"{r.label}: {r.status}, {r.segments} segments, {r.breaks} breaks, "
                    f"{r.seconds:.2f}s, graphs {r.pool_mib:.0f} MiB, replay {exact}{fast}"
                )
            else:
                lines.append(f"{r.label}: {r.status}: {r.reason}")
        evicted = sum(r.status == "evicted" for r in self.records)
        lines.append(
            f"{self.captured} new captures in {self.seconds:.1f}s"
            + (f" ({evicted} evicted again, memory budget)" if evicted else "")
            + f"; graph memory {self.graph_mib:.0f} MiB; peak memory +{self.peak_growth_mib:.0f} MiB"
        )
        return "\n".join(lines)


def plan_jobs(
    session: BCGSession, plan: WarmupPlan, positive=None, negative=None, latent=None
) -> tuple[list[WarmupJob], list[str]]:
    """The one-step sampling runs that make ComfyUI issue every planned DiT call (``latent``: the
    workflow's LATENT samples tensor, run with the workflow's conditioning)."""
    adapter = session.adapter
    notes: list[str] = []
    prompts: dict[int, tuple] = {}  # text length the DiT sees -> (cond, uncond), built once
    buckets: set[tuple[int, int]] = set()
    for requested in plan.text_lengths:
        seen = adapter.text_length_seen(requested)
        if seen != requested:
            notes.append(f"text bucket {requested} reaches the DiT as {seen} ({adapter.text_policy})")
        lengths = [seen]
        bucket = adapter.text_bucket(seen) if session.buckets_text else None
        if bucket is not None:  # one graph per bucket, captured at one length and proven at another
            if bucket in buckets:
                continue
            buckets.add(bucket)
            other = bucket[0] if seen != bucket[0] else bucket[1]
            lengths.append(other)
            notes.append(
                f"text {bucket[0]}-{bucket[1]}: one graph for every caption length of the bucket, "
                f"captured at {seen} tokens and proven against eager at {other}"
            )
        for length in lengths:
            if length not in prompts:
                prompts[length] = tuple(
                    sampling.make_conditioning(adapter.family, length, seed=s, text_dim=adapter.text_dim)
                    for s in (0, 1)
                )
    jobs: list[WarmupJob] = []
    if latent is not None and positive is not None:
        h, w = (int(n) * session.adapter.latent_scale for n in latent.shape[-2:])
        shape = "x".join(map(str, latent.shape))
        neg = negative if negative is not None else positive
        jobs.append(WarmupJob(w, h, latent.shape[0], 1.0, positive, neg, f"workflow latent {shape}, cfg 1", latent))
        if negative is not None:
            jobs.append(
                WarmupJob(
                    w, h, latent.shape[0], WARMUP_CFG, positive, negative, f"workflow latent {shape}, cfg > 1", latent
                )
            )
    for w, h, f in plan.resolutions:
        if positive is not None:
            neg = negative if negative is not None else positive
            jobs.append(WarmupJob(w, h, 1, 1.0, positive, neg, "workflow prompt, cfg 1", frames=f))
            if negative is not None:
                jobs.append(WarmupJob(w, h, 1, WARMUP_CFG, positive, negative, "workflow prompt, cfg > 1", frames=f))
        for length, (cond, uncond) in prompts.items():
            for b in plan.batch_sizes:
                if b % 2 == 0:
                    jobs.append(
                        WarmupJob(
                            w, h, b // 2, WARMUP_CFG, cond, uncond, f"text {length}, cond+uncond batch {b}", frames=f
                        )
                    )
                else:
                    jobs.append(WarmupJob(w, h, b, 1.0, cond, cond, f"text {length}, batch {b}", frames=f))
    # Largest first: the shared pool is sized once by the biggest capture and reused by the rest.
    jobs.sort(
        key=lambda j: j.width * j.height * (j.frames or 1) * j.latent_batch * (2 if j.cfg > 1 else 1), reverse=True
    )
    return jobs, notes


def run_warmup(
    model_patcher: Any,
    session: BCGSession,
    plan: WarmupPlan,
    positive=None,
    negative=None,
    progress: Callable[[int, int], None] | None = None,
    latent=None,
) -> WarmupReport:
    """Capture the plan for ``model_patcher``; never raises for a shape that cannot be captured."""
    import comfy.model_management as mm

    report = WarmupReport(model=session.adapter.display_name if session.adapter else "unsupported model")
    # TorchCompileModel before BCG Apply: every sampling run steps aside (guards.run_refusal), so a
    # warm-up would only compile dynamo's graphs for shapes no BCG graph will serve; it says so instead.
    report.refusal = (
        session.permanent_refusal
        or guards.dynamic_vram_refusal(model_patcher)
        or guards.compile_refusal(model_patcher)
        or per_step_refusal(session.adapter)
    )
    if report.refusal:
        if report.refusal == session.permanent_refusal:  # BCG Apply (or start-up) said it already
            log.debug("[BCG] warm-up skipped: %s", report.refusal)
        else:
            log.warning("[BCG] warm-up skipped: %s", report.refusal)
        return _finish(session, report, logged=True)

    device = model_patcher.load_device
    start = time.perf_counter()
    try:
        mm.load_models_gpu([model_patcher], force_full_load=True)
    except torch.OutOfMemoryError:
        report.refusal = "out of memory loading the model fully on the GPU; free VRAM or use a smaller model"
        return _finish(session, report)
    report.refusal = guards.lowvram_refusal(model_patcher)
    if report.refusal:
        return _finish(session, report)
    resident = _reset_peak(device)  # weights and whatever else was already there

    jobs, report.notes = plan_jobs(session, plan, positive, negative, latent)
    report.notes = plan.notes + report.notes
    session.stale = None
    session.runner.enable()
    session.runner.begin_warmup()
    session.capture_log = []
    try:
        for i, job in enumerate(jobs):
            try:
                sampling.sample(
                    model_patcher, session.adapter.family, job.width, job.height, 1, job.cfg,
                    job.positive, job.negative, batch=job.latent_batch, latent=job.latent,
                    frames=job.frames, latent_scale=session.adapter.latent_scale,
                )  # fmt: skip
            except torch.OutOfMemoryError:
                # Jobs run largest first, so the smaller ones after this may still fit; the runner
                # itself stops capturing if the OOM hit inside a capture, and says so per shape.
                report.notes.append(f"{job.size} {job.what}: out of memory, not captured")
                _release_cached(device)
            except mm.InterruptProcessingException:
                raise  # Cancel ends the warm-up
            except Exception as error:
                # The model's own forward refused this job (its eager run failed too: the runner
                # falls back to eager before anything reaches here), e.g. conditioning of another
                # width than the model takes. The other jobs still run; sampling that shape later
                # meets the same error from ComfyUI itself.
                report.notes.append(
                    f"{job.size} {job.what}: the model's forward failed ({one_line(error)}), not captured"
                )
                log.warning(
                    "[BCG] warm-up %s %s: the model's forward failed, not captured", job.size, job.what, exc_info=True
                )
            if progress:
                progress(i + 1, len(jobs))
    finally:
        report.records, session.capture_log = session.capture_log, None
    _mark_evicted(session, report)
    peak = _peak(device)
    report.seconds = time.perf_counter() - start
    report.peak_growth_mib = max(0, peak - resident) / 2**20
    report.graph_mib = session.runner.memory_bytes / 2**20
    return _finish(session, report)


def per_step_refusal(adapter) -> str | None:
    """Why a warm-up captures nothing for a family keyed on its sampling step
    (``ModelAdapter.keys_per_step``): its one placeholder step would make a graph for a step no
    schedule is known to take. Sampling captures a schedule's steps from its second run instead."""
    if adapter is None or not adapter.keys_per_step:
        return None
    return (
        f"{adapter.display_name} keys each graph on its sampling step (its forward reads the step on the host), "
        "and a warm-up cannot know the sampler's schedule: nothing to capture here. With capture 'auto' a "
        "schedule's steps are captured on its second run and replayed from then on"
    )


#: What the report says of a shape this warm-up captured and then evicted again.
EVICTED = (
    "captured and proven, then evicted (least recently used) to keep graphs under the memory budget; "
    "raise memory_budget_mb (0: automatic) or warm fewer shapes"
)


def _mark_evicted(session: BCGSession, report: WarmupReport) -> None:
    """One record per shape, saying what the warm-up left of it.

    Two jobs can issue the same DiT call (a workflow prompt and a placeholder of its length), and a
    shape captured early can be evicted by a later one under the memory budget and captured again:
    the report keeps each shape's last record, and a shape that is no longer held is "evicted",
    never "captured".
    """
    last: dict[str, CaptureRecord] = {}
    for record in report.records:
        earlier = last.pop(record.label, None)
        # "already captured" by a later job of this warm-up is the capture an earlier job made
        keep_earlier = earlier is not None and earlier.status == "captured" and record.status == "already captured"
        last[record.label] = earlier if keep_earlier else record
    live = {e.label for e in session.runner.entries()}
    for record in last.values():
        if record.status in ("captured", "already captured") and record.label not in live:
            record.status, record.reason = "evicted", EVICTED
    report.records = list(last.values())


def _release_cached(device: torch.device) -> None:
    """Give the half-built shape's memory back before the next, smaller one tries."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def _reset_peak(device: torch.device) -> int:
    """Allocated bytes now, with the peak counter restarted (0 where there is no CUDA)."""
    if device.type != "cuda":
        return 0
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    return torch.cuda.memory_allocated(device)


def _peak(device: torch.device) -> int:
    if device.type != "cuda":
        return 0
    torch.cuda.synchronize(device)
    return torch.cuda.max_memory_allocated(device)


def _finish(session: BCGSession, report: WarmupReport, logged: bool = False) -> WarmupReport:
    """Keep the report for the UI and log it: one INFO line (its totals, or why it was refused,
    unless ``logged``: the caller said why already); the per-shape lines at DEBUG (the node's report
    output and the details view hold them)."""
    session.last_warmup = report.as_dict()
    lines = report.text().splitlines()
    for line in lines[1:-1] if not report.refusal else ():
        log.debug("[BCG] %s", line)
    if not logged:
        log.info("[BCG] warm-up of %s: %s", report.model, lines[-1])
    status_report.publish(session)
    return report
