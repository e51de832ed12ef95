"""Counters a UI can show: replays (hits), eager calls by reason, what was captured and what it cost."""

from __future__ import annotations

import statistics
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class ProofTimes(NamedTuple):
    """One proof's timings in seconds, the device synchronised before each call and after it:
    ``eager`` the live call's eager run, ``host`` the time until that call returned (the host's
    share: at most ``eager``), ``replay`` the replay of the same inputs."""

    eager: float
    host: float
    replay: float

    def as_ms(self) -> dict[str, float]:
        return _ms(self)


class CapturePhases(NamedTuple):
    """Where one capture's time went, in seconds, the device synchronised after the first two:
    ``warmup`` the eager runs before it (on the capture stream; with the live call's host reads
    recorded first where the adapter replays them), ``graph`` recording the graph (the forward's
    Python under the outside-reads audit) and instantiating it, ``held`` sorting the outside reads
    the entry holds (their bit copies launched)."""

    warmup: float
    graph: float
    held: float

    def as_ms(self) -> dict[str, float]:
        return _ms(self)


def _ms(times: NamedTuple) -> dict[str, float]:
    return {name: round(1000 * value, 2) for name, value in times._asdict().items()}


@dataclass
class EntryStats:
    """One captured signature."""

    label: str
    segments: int
    breaks: int
    capture_seconds: float
    pool_bytes_after: int
    static_bytes: int
    hits: int = 0
    #: The proof's timings (seconds, None before it): the eager call and the host's share of it
    #: (until the call returned, before the device was synchronised), then the replay.
    proof: ProofTimes | None = None
    #: The capture's own time (``capture_seconds``) by phase.
    phases: CapturePhases | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "segments": self.segments,
            "breaks": self.breaks,
            "capture_seconds": round(self.capture_seconds, 4),
            "pool_bytes_after": self.pool_bytes_after,
            "static_bytes": self.static_bytes,
            "hits": self.hits,
            "proof_ms": self.proof.as_ms() if self.proof else None,
            "capture_ms": self.phases.as_ms() if self.phases else None,
        }


def size_class(tensor: Any) -> int:
    """The bit length of ``tensor``'s element count (0 for no tensor): a DiT call's latent, whose
    size sets how the call's host and device times compare. One class spans a factor of two."""
    return tensor.numel().bit_length() if tensor is not None else 0


@dataclass
class CaptureCosts:
    """What captures cost and what replays save, measured at each proof (both timed there, with
    the device synchronised around each): the numbers a first-call capture is weighed with.

    ``overhead_s``: capture time (warm-up run, capture, instantiation) plus the proof's replay,
    i.e. what a first call costs beyond the eager call it answers with. A replay's saving: what it
    saves in a run of calls, where the host queues a call's kernels while the device still runs
    the last ones: an eager call then takes about max(host, device) and a replay about the
    device's time (the proof's replay), so the saving is the host time past the device's, never
    less than 0. Timed alone after a synchronisation, an eager call also waits for its own last
    kernels, so eager minus replay would credit a device-bound call with a saving no run sees.
    Savings are kept per :func:`size_class`: the same model is host-bound at 512² and
    device-bound at 1024² on one machine, so a size with no proof of its own is captured to
    measure it, never judged by another size's saving. Both are medians of the last
    :attr:`WINDOW` proofs: one slow capture (a new pool, a kernel's first launch at a new size)
    must not stop every later one; a size's saving is its largest until it has :attr:`SETTLED`.
    A device's first capture runs two warm-up forwards where a later one runs one and carries the
    device's first use: its saving is a sample, its cost is not.
    """

    WINDOW = 16
    #: Proofs a size class holds before its median judges it (:meth:`saving_of`).
    SETTLED = WINDOW // 2
    overheads: deque = field(default_factory=lambda: deque(maxlen=CaptureCosts.WINDOW))
    #: Savings by size class, each a window of the last proofs of that class.
    savings: dict[int, deque] = field(default_factory=dict)

    def record(self, capture_s: float | None, proof: ProofTimes, size: int) -> None:
        """One proof's sample for calls of ``size`` (:func:`size_class`); ``capture_s`` None: its
        saving only (a first capture's cost)."""
        if capture_s is not None:
            self.overheads.append(capture_s + proof.replay)
        window = self.savings.setdefault(size, deque(maxlen=self.WINDOW))
        window.append(max(0.0, proof.host - proof.replay))

    @property
    def samples(self) -> int:
        """Proofs sampled, of every size (each gave a saving; some a cost too)."""
        return sum(map(len, self.savings.values()))

    @property
    def overhead_s(self) -> float:
        return statistics.median(self.overheads) if self.overheads else 0.0

    @property
    def saving_s(self) -> float:
        """The median saving over every size's window (what a report shows)."""
        every = [s for window in self.savings.values() for s in window]
        return statistics.median(every) if every else 0.0

    def saving_of(self, size: int) -> float | None:
        """The saving of calls of ``size``: the median of its window once that holds
        :attr:`SETTLED` proofs, the largest before; None where no proof of that size was timed. Only
        a capture's proof adds a sample, so a median of two or three early proofs that a busy host
        made low would keep the captures that correct it from happening for many runs."""
        window = self.savings.get(size)
        if not window:
            return None
        return statistics.median(window) if len(window) >= self.SETTLED else max(window)

    def repays(self, calls: int, size: int) -> bool:
        """Would ``calls`` replays of ``size`` save more than one capture costs? True until a
        saving of that size was measured; with no cost measured yet, whenever they save anything."""
        saving = self.saving_of(size)
        return saving is None or calls * saving > self.overhead_s


@dataclass
class RunnerStats:
    """Cumulative counters of one runner. ``eager`` counts the calls that ran eager, by their reason."""

    hits: int = 0
    eager: Counter = field(default_factory=Counter)
    captures: int = 0
    #: Entries dropped to make room for new ones (``RunnerLimits.evict_lru``).
    evictions: int = 0
    capture_failures: int = 0
    capture_seconds: float = 0.0
    pool_bytes: int = 0
    static_bytes: int = 0
    costs: CaptureCosts = field(default_factory=CaptureCosts)

    @property
    def calls(self) -> int:
        return self.hits + sum(self.eager.values())

    def record_eager(self, reason: str) -> None:
        self.eager[reason] += 1

    def window(self) -> "StatsWindow":
        """Start counting a sampling run: ``window.delta()`` later gives that run's counts."""
        return StatsWindow(self, self.hits, Counter(self.eager), self.evictions)


@dataclass
class StatsWindow:
    stats: RunnerStats
    hits0: int
    eager0: Counter
    evictions0: int = 0

    def delta(self) -> tuple[int, Counter]:
        """``(replayed, eager_by_reason)`` since the window opened."""
        eager = Counter(self.stats.eager)
        eager.subtract(self.eager0)
        return self.stats.hits - self.hits0, +eager

    def evictions(self) -> int:
        """Entries evicted since the window opened."""
        return self.stats.evictions - self.evictions0


def summarize_run(replayed: int, eager: Counter, evicted: int = 0) -> str:
    """``replayed 14/16 calls; eager: 2x not captured: 640x512`` (one line for the log and UI),
    with ``; evicted N graphs (memory budget)`` when entries were evicted."""
    total = replayed + sum(eager.values())
    text = f"replayed {replayed}/{total} calls"
    if eager:
        reasons = ", ".join(f"{n}x {reason}" for reason, n in eager.most_common())
        text += f"; eager: {reasons}"
    if evicted:
        text += f"; evicted {evicted} graph{'s' if evicted > 1 else ''} (memory budget)"
    return text
