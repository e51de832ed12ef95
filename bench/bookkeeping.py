"""What BCG costs on the host per DiT call: the time its DIFFUSION_MODEL hook takes beyond the
DiT's own forward.

:func:`hook_times` adds a DIFFUSION_MODEL wrapper of its own to the BCG model (BCG moves its hook
innermost for every run, so this one runs around it) and times, inside it, every run of the DiT's
``_forward`` (an instance attribute over the class's method for the duration; the benchmark's own
model only). A call that ran the forward once was answered eagerly: the time beyond that forward is
BCG's bookkeeping (deciding, keying, a text prologue, counting), kept with the reason BCG counted
(read from the runner's counters before and after the call, outside the timed region; a graph's
proof on another variant of its key also runs the forward once, beside a replay: its reason reads
"served"). A call that ran no forward replayed: its time is the replay's host cost.
Calls that ran it more often captured a graph and are counted apart. Python's garbage collector
may pause any call: the pauses that fell in an eager call's bookkeeping (outside its forward) are
summed apart (``gc.callbacks``), and the slowest calls are listed with their reasons, so a slow
tail can be told from BCG's own work.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterator


@dataclass
class HookTimes:
    #: Seconds of the hook beyond the forward, per call answered eagerly.
    eager_overhead: list[float] = field(default_factory=list)
    #: Seconds of the hook per replayed call (no forward ran).
    replay: list[float] = field(default_factory=list)
    #: Calls that captured or proved a graph (the forward ran more than once).
    captures: int = 0
    #: Seconds of garbage collection within ``eager_overhead``, per call answered eagerly.
    eager_gc: list[float] = field(default_factory=list)
    #: The reason BCG counted, per call answered eagerly (``"served"`` for a proof that replayed).
    eager_reason: list[str] = field(default_factory=list)
    #: False for a DiT without ``_forward`` (SD3's MMDiT): its forward runs no DIFFUSION_MODEL
    #: wrapper but BCG's own, so nothing here can time it.
    measured: bool = True

    def summary(self) -> dict:
        def ms(values: list[float], how) -> float | None:
            return round(1000 * how(values), 4) if values else None

        return {
            "bookkeeping_measured": self.measured,
            "eager_calls": len(self.eager_overhead),
            "bookkeeping_ms_mean": ms(self.eager_overhead, statistics.fmean),
            "bookkeeping_ms_median": ms(self.eager_overhead, statistics.median),
            "bookkeeping_ms_p99": ms(self.eager_overhead, lambda v: sorted(v)[int(0.99 * (len(v) - 1))]),
            "bookkeeping_gc_ms_mean": ms(self.eager_gc, statistics.fmean),
            "replayed_calls": len(self.replay),
            "replay_host_ms_median": ms(self.replay, statistics.median),
            "capture_calls": self.captures,
            "bookkeeping_slowest": self.slowest(),
        }

    def slowest(self, n: int = 5) -> list[dict]:
        """The ``n`` eager calls whose bookkeeping took longest: milliseconds, of them garbage
        collection, and the reason the call ran eager (what a slow tail is made of)."""
        calls = sorted(zip(self.eager_overhead, self.eager_gc, self.eager_reason), reverse=True)[:n]
        return [{"ms": round(1000 * s, 3), "gc_ms": round(1000 * g, 3), "reason": r} for s, g, r in calls]


@contextlib.contextmanager
def hook_times(bcg_model: Any) -> Iterator[HookTimes]:
    """Time BCG's hook on ``bcg_model`` (a ModelPatcher BCG Apply returned) and its DiT's forward
    inside it (module docstring)."""
    from comfy.patcher_extension import WrappersMP

    from bcg_runtime.comfy import api

    diffusion_model = bcg_model.get_model_object("diffusion_model")
    session = api.session_of(bcg_model)  # None on a model without BCG: the plain hook's cost, no reasons
    stats = session.runner.stats if session is not None else None
    times = HookTimes()
    if getattr(type(diffusion_model), "_forward", None) is None:
        times.measured = False
        yield times
        return
    inside = {"seconds": 0.0, "runs": 0, "in_forward": False, "hooked": False, "gc": 0.0, "gc_start": 0.0}
    plain_forward = type(diffusion_model)._forward.__get__(diffusion_model)

    def forward(*args, **kwargs):
        start = time.perf_counter()
        inside["in_forward"] = True
        try:
            return plain_forward(*args, **kwargs)
        finally:
            inside["in_forward"] = False
            inside["seconds"] += time.perf_counter() - start
            inside["runs"] += 1

    def collecting(phase: str, info: dict) -> None:
        if phase == "start":
            inside["gc_start"] = time.perf_counter()
        elif inside["hooked"] and not inside["in_forward"]:
            inside["gc"] += time.perf_counter() - inside["gc_start"]

    def around_bcg(executor, *args, **kwargs):
        inside["seconds"], inside["runs"], inside["gc"], inside["hooked"] = 0.0, 0, 0.0, True
        counted = stats.eager.copy() if stats is not None else None
        start = time.perf_counter()
        try:
            out = executor(*args, **kwargs)
        finally:
            inside["hooked"] = False
        total = time.perf_counter() - start
        if inside["runs"] == 1:
            times.eager_overhead.append(total - inside["seconds"])
            times.eager_gc.append(inside["gc"])
            times.eager_reason.append(_reason(counted, stats))
        elif inside["runs"] == 0:
            times.replay.append(total)
        else:
            times.captures += 1
        return out

    diffusion_model._forward = forward
    bcg_model.add_wrapper_with_key(WrappersMP.DIFFUSION_MODEL, KEY, around_bcg)
    gc.callbacks.append(collecting)
    try:
        yield times
    finally:
        gc.callbacks.remove(collecting)
        bcg_model.remove_wrappers_with_key(WrappersMP.DIFFUSION_MODEL, KEY)
        del diffusion_model._forward


def _reason(before: Counter | None, stats: Any) -> str:
    """The reason BCG counted an eager call under: the runner's eager counter that grew during it
    ("served" where none did: a proof that replayed; "no BCG" on a model without BCG)."""
    if before is None:
        return "no BCG"
    grown = stats.eager - before
    return next(iter(grown), "served")


KEY = "bench_hook_times"


@dataclass
class SamplingSplit:
    """Host seconds of the sampling runs inside :func:`sampling_split`, summed since the last
    :meth:`take`: in ComfyUI's model load (``load_models_gpu``) and in DiT calls (the model's
    ``apply_model``, BCG's hook included), and how many DiT calls. A replay returns once its
    kernels are queued, so where calls replay the device's time shows after them, not in them."""

    load: float = 0.0
    dit: float = 0.0
    dit_calls: int = 0

    def take(self) -> tuple[float, float, int]:
        out = (self.load, self.dit, self.dit_calls)
        self.load, self.dit, self.dit_calls = 0.0, 0.0, 0
        return out

    def add_load(self, seconds: float) -> None:
        self.load += seconds

    def add_dit(self, seconds: float) -> None:
        self.dit += seconds
        self.dit_calls += 1


def _timed(fn, add):
    """``fn``, handing the seconds each call took to ``add``."""

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            add(time.perf_counter() - start)

    return timed


@contextlib.contextmanager
def sampling_split(model: Any) -> Iterator[SamplingSplit]:
    """Time ComfyUI's model load and the DiT calls of every sampling run of ``model`` and of every
    clone sharing its ``BaseModel`` (BCG Apply's included), so a job's wall time can be told apart
    into load, DiT calls and the rest (sampler, conditioning, BCG's per-run hooks) on both sides."""
    import comfy.model_management as mm

    split = SamplingSplit()
    base = model.model
    plain_load = mm.load_models_gpu
    own = base.__dict__.get("apply_model")  # an instance attribute someone set before, kept
    load_models_gpu, apply_model = _timed(plain_load, split.add_load), _timed(base.apply_model, split.add_dit)
    mm.load_models_gpu, base.apply_model = load_models_gpu, apply_model
    try:
        yield split
    finally:
        mm.load_models_gpu = plain_load
        if own is None:
            del base.apply_model
        else:
            base.apply_model = own
