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
        return {name: round(1000 * value, 2) for name, value in self._asdict().items()}


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
        }


@dataclass
class CaptureCosts:
    """What captures cost and what replays save, measured at each proof (both timed there, with
    the device synchronised around each): the numbers a first-call capture is weighed with.

    ``overhead_s``: capture time (warm-up run, capture, instantiation) plus the proof's replay,
    i.e. what a first call costs beyond the eager call it answers with. ``saving_s``: what one
    replay saves in a run of calls, where the host queues a call's kernels while the device still
    runs the last ones: an eager call then takes about max(host, device) and a replay about the
    device's time (the proof's replay), so the saving is the host time past the device's, never
    less than 0. Timed alone after a synchronisation, an eager call also waits for its own last
    kernels, so eager minus replay would credit a device-bound call with a saving no run sees.
    Both are medians of the last :attr:`WINDOW` captures: one slow capture (a new pool, a kernel's
    first launch at a new size) must not stop every later one. A device's first capture carries
    lazy initialisation (many times a later one's cost): its saving is a sample, its cost is not.
    """

    WINDOW = 16
    overheads: deque = field(default_factory=lambda: deque(maxlen=CaptureCosts.WINDOW))
    savings: deque = field(default_factory=lambda: deque(maxlen=CaptureCosts.WINDOW))

    def record(self, capture_s: float | None, proof: ProofTimes) -> None:
        """One proof's sample; ``capture_s`` None: its saving only (a first capture's cost)."""
        if capture_s is not None:
            self.overheads.append(capture_s + proof.replay)
        self.savings.append(max(0.0, proof.host - proof.replay))

    @property
    def samples(self) -> int:
        """Proofs sampled (each gave a saving; some a cost too)."""
        return len(self.savings)

    @property
    def overhead_s(self) -> float:
        return statistics.median(self.overheads) if self.overheads else 0.0

    @property
    def saving_s(self) -> float:
        return statistics.median(self.savings) if self.savings else 0.0

    def repays(self, calls: int) -> bool:
        """Would ``calls`` replays save more than one capture costs? True until a saving was
        measured; with no cost measured yet, whenever they save anything."""
        return not self.samples or calls * self.saving_s > self.overhead_s


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
