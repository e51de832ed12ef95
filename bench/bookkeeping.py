"""What BCG costs on the host per DiT call: the time its DIFFUSION_MODEL hook takes beyond the
DiT's own forward.

:func:`hook_times` times every call of BCG's hook and, inside it, every run of the DiT's
``_forward`` (an instance attribute over the class's method for the duration; the benchmark's
own model only). A call that ran the forward once was answered eagerly: the hook's time beyond
that forward is BCG's bookkeeping (deciding, keying, a text prologue, counting). A call that ran
no forward replayed: its time is the replay's host cost. Calls that ran it more often captured or
proved a graph and are counted apart.
"""

from __future__ import annotations

import contextlib
import statistics
import time
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

    def summary(self) -> dict:
        def ms(values: list[float], how) -> float | None:
            return round(1000 * how(values), 4) if values else None

        return {
            "eager_calls": len(self.eager_overhead),
            "bookkeeping_ms_mean": ms(self.eager_overhead, statistics.fmean),
            "bookkeeping_ms_median": ms(self.eager_overhead, statistics.median),
            "replayed_calls": len(self.replay),
            "replay_host_ms_median": ms(self.replay, statistics.median),
            "capture_calls": self.captures,
        }


@contextlib.contextmanager
def hook_times(diffusion_model: Any) -> Iterator[HookTimes]:
    """Time BCG's hook and ``diffusion_model``'s forward inside it (module docstring)."""
    from bcg_runtime.comfy.hooks import DiffusionModelHook

    times = HookTimes()
    inside = {"seconds": 0.0, "runs": 0}
    plain_forward = type(diffusion_model)._forward.__get__(diffusion_model)
    plain_hook = DiffusionModelHook.__call__

    def forward(*args, **kwargs):
        start = time.perf_counter()
        try:
            return plain_forward(*args, **kwargs)
        finally:
            inside["seconds"] += time.perf_counter() - start
            inside["runs"] += 1

    def hook(self, executor, *args, **kwargs):
        inside["seconds"], inside["runs"] = 0.0, 0
        start = time.perf_counter()
        out = plain_hook(self, executor, *args, **kwargs)
        total = time.perf_counter() - start
        if inside["runs"] == 1:
            times.eager_overhead.append(total - inside["seconds"])
        elif inside["runs"] == 0:
            times.replay.append(total)
        else:
            times.captures += 1
        return out

    diffusion_model._forward = forward
    DiffusionModelHook.__call__ = hook
    try:
        yield times
    finally:
        DiffusionModelHook.__call__ = plain_hook
        del diffusion_model._forward
