"""The runner's table: proven entries by key, blocked and retry-later keys, the memory pools the
entries draw on, and the least-recently-used eviction that keeps them under their limits.

Pool lifetime. A pool no live entry draws on is forgotten at once, so the next capture starts a
fresh one: torch 2.11's pinned-host allocator drops its record of a pool with its last graph, and
a later ``capture_begin`` on that pool id fails an internal assert after the device allocator has
already started routing into it. Forgetting it outside any capture also gives its memory back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

import torch

from . import reasons
from .dispatch import Call, CallKey, describe_key
from .graph import BreakableGraph
from .outside_reads import HeldTensor, OutsideRead
from .reasons import Reason, one_line
from .stats import EntryStats, RunnerStats

log = logging.getLogger(__name__)

_NEVER = object()


def outside_written_reason(read: OutsideRead) -> Reason:
    """Reason of an eager call whose entry was dropped because a tensor it holds was written."""
    return Reason(
        reasons.STALE,
        f"graph dropped: a tensor it reads outside its arguments and weights was written since capture "
        f"({read.describe()})",
    )


@dataclass(frozen=True)
class RunnerLimits:
    """Bounds that stop capturing (never correctness)."""

    #: Captured signatures kept at once. The memory budget is the real bound; this one only stops a
    #: runaway (a batch job of varied prompts meets hundreds of signatures, each a few MiB).
    max_entries: int = 512
    max_segments: int = 512
    #: Pool plus static/bridge bytes above which no further signature is captured; None: no limit.
    memory_budget_bytes: int | None = None
    #: Eager runs on the capture stream before the first capture on a device (lazy init: cuBLAS
    #: creates its workspace for the capture stream, kernels load and tune on first use).
    warmup_runs: int = 2
    #: Eager runs before every later capture: none, since the proof's eager run of the live call
    #: comes first and does a shape's lazy work (a kernel's first launch at a new size); the
    #: capture stream's own (cuBLAS's workspace) the device's first capture did. Each run costs a
    #: whole forward, most of what a first-call capture costs beyond its eager answer.
    warmup_runs_after_first: int = 0
    #: At ``max_entries`` or the memory budget, drop the least recently used entries to make room
    #: for a new capture instead of refusing it.
    evict_lru: bool = False


DEFAULT_LIMITS = RunnerLimits()


@dataclass
class Entry:
    """A proven graph of one key, with what it serves under."""

    graph: BreakableGraph
    static_leaves: list[torch.Tensor]
    output: Any
    stats: EntryStats
    #: The caller's ``state`` at capture: the entry serves only calls that pass an equal one.
    state: Any = None
    #: Pinned copy sources the graph reads at every replay (``stage_host_copies``): held for its life.
    host_buffers: list[torch.Tensor] = field(default_factory=list)
    #: What the capture read outside its inputs, its own memory and the ``state``'s storages
    #: (held for its life), each with how a write into it shows (:class:`HeldTensor`).
    outside: list[HeldTensor] = field(default_factory=list)
    #: The ``state`` object under which the held tensors' bits were last compared.
    bits_compared_under: Any = _NEVER
    #: The variant of the call it was captured for (:class:`~.dispatch.Dispatch`), and whether a
    #: replay of another variant has since equalled its reference (then it serves them all).
    variant: Hashable = None
    shared: bool = False

    def serves(self, variant: Hashable) -> bool:
        """Whether a call of ``variant`` may replay without a proof first."""
        return self.shared or variant == self.variant

    def outside_written(self, state: Any) -> OutsideRead | None:
        """The first held tensor written since capture, or None. Bits are compared once per
        ``state`` object (the caller takes one per run), at every call where ``state`` is None."""
        compare = state is None or state is not self.bits_compared_under
        for held in self.outside:
            if held.changed(compare):
                return held.read
        if compare:
            self.bits_compared_under = state
        return None

    def replay(self, leaves: list[torch.Tensor]) -> Any:
        """Copy the live tensors into the static buffers (current stream) and replay; returns the
        output tree in the pool (clone it before the next replay)."""
        for static, live in zip(self.static_leaves, leaves):
            static.copy_(live)
        self.graph.replay()
        return self.output


def same_state(bound: Any, now: Any) -> bool:
    """Whether an entry bound to ``bound`` may serve under ``now``: the same object at once, else
    an equal one (a fingerprint walks its parts to say so)."""
    return bound is now or bound == now


class EntryTable:
    """Entries, blocks and pools of one runner; keeps ``stats``' memory figures true."""

    def __init__(self, name: str, stats: RunnerStats):
        self.name = name
        self.stats = stats
        self.entries: dict[CallKey, Entry] = {}
        self.blocked: dict[CallKey, Reason] = {}
        #: Keys whose capture failed for a passing reason (out of memory): retried after a warm-up begins.
        self.retry: dict[CallKey, Reason] = {}
        self.pools: dict[torch.device, Any] = {}

    @property
    def memory_bytes(self) -> int:
        """Graph pools plus static input and bridge buffers: what the graphs keep resident."""
        return self.stats.pool_bytes + self.stats.static_bytes

    def refusal(self, key: CallKey) -> Reason | None:
        """Why ``key`` is not captured now: blocked for good, or until the next warm-up."""
        return self.blocked.get(key) or self.retry.get(key)

    def full(self, max_entries: int, budget: int | None) -> Reason | None:
        """Why no further entry fits (``max_entries`` or the memory ``budget`` reached), or None."""
        if len(self.entries) >= max_entries:
            return Reason(reasons.LIMIT, f"entry limit reached ({max_entries} captured shapes)")
        if budget is not None and self.memory_bytes >= budget:
            return Reason(
                reasons.LIMIT,
                f"memory budget reached ({self.memory_bytes / 2**20:.0f} of {budget / 2**20:.0f} MiB in graphs)",
            )
        return None

    def pool(self, device: torch.device, new_pool: Callable[[torch.device], Any]) -> Any:
        pool = self.pools.get(device)
        if pool is None:
            pool = self.pools[device] = new_pool(device)
        return pool

    def store(self, key: CallKey, entry: Entry, captured: bool = False) -> None:
        """Hold a proven entry; ``captured``: it is a new capture (counted and logged)."""
        self.entries[key] = entry
        self.stats.static_bytes += entry.stats.static_bytes
        self.stats.pool_bytes = entry.stats.pool_bytes_after = self._pool_bytes()
        if not captured:
            return
        self.stats.captures += 1
        self.stats.capture_seconds += entry.stats.capture_seconds
        outside, proof, phases = entry.outside, entry.stats.proof, entry.stats.phases
        log.info(
            "[BCG] %s: captured %s in %.2fs: %d segments, %d breaks, pool %.1f MiB, replay exact%s%s",
            self.name, entry.stats.label, entry.stats.capture_seconds, entry.graph.num_segments,
            entry.graph.num_breaks, self.stats.pool_bytes / 2**20,
            f" (warm-up {1000 * phases.warmup:.1f} ms, graph {1000 * phases.graph:.1f} ms, held reads "
            f"{1000 * phases.held:.1f} ms; proof: eager {1000 * proof.eager:.1f} ms, {1000 * proof.host:.1f} of "
            f"it host; replay {1000 * proof.replay:.1f} ms)" if proof and phases else "",
            f"; holds {len(outside)} tensor(s) it reads outside its arguments and weights: "
            + ", ".join(held.read.describe() for held in outside[:4]) if outside else "",
        )  # fmt: skip

    def capture_failed(self, call: Call, error: Exception, passing: bool) -> Reason:
        """A capture of ``call`` raised ``error``: its key is blocked for good, or retried after the
        next warm-up where the cause is ``passing`` (out of memory); returns the reason."""
        self.stats.capture_failures += 1
        if passing:
            reason = self.retry[call.key] = Reason(
                reasons.CAPTURE_FAILED, "capture failed: out of memory (retried at the next warm-up)"
            )
        else:
            reason = self.blocked[call.key] = Reason(reasons.CAPTURE_FAILED, f"capture failed: {one_line(error)}")
        log.warning("[BCG] %s: %s for %s; this shape runs eager", self.name, reason, call.label)
        return reason

    def touch(self, key: CallKey) -> None:
        """Mark ``key`` most recently used (eviction drops the first entries)."""
        self.entries[key] = self.entries.pop(key)

    def drop(self, key: CallKey) -> None:
        entry = self.entries.pop(key)
        entry.graph.reset()
        self.stats.static_bytes -= entry.stats.static_bytes
        self.release_unused_pools()
        self.stats.pool_bytes = self._pool_bytes()

    def block(self, call: Call, reason: Reason) -> Reason:
        """Drop the entry of ``call`` and block its key for good; returns the reason."""
        if call.key in self.entries:
            self.drop(call.key)
        self.blocked[call.key] = reason
        log.error("[BCG] %s: %s for %s: entry dropped, this shape runs eager", self.name, reason, call.label)
        return reason

    def drop_unbound(self, state: Any) -> int:
        """Drop every entry bound to another ``state``; returns how many. The entries kept are bound
        to ``state`` itself, the equal state's new object, which later calls compare at once."""
        stale = []
        for key, entry in self.entries.items():
            if same_state(entry.state, state):
                entry.state = state
            else:
                stale.append(key)
        for key in stale:
            self.drop(key)
        return len(stale)

    def make_room(self, max_entries: int, budget: int | None) -> None:
        """Evict least recently used entries until one more fits under ``max_entries`` and ``budget``.
        A pool whose last entry goes is released; one shared with live entries keeps its reserved
        memory for them and for the next captures, which reuse its free blocks."""
        while self.entries and (
            len(self.entries) >= max_entries or (budget is not None and self.memory_bytes >= budget)
        ):
            key = next(iter(self.entries))
            label = self.entries[key].stats.label
            self.drop(key)
            self.stats.evictions += 1
            log.info("[BCG] %s: evicted %s (least recently used) to make room: graphs hold %.1f MiB",
                     self.name, label, self.memory_bytes / 2**20)  # fmt: skip

    def forget_pool(self, device: torch.device) -> None:
        """A capture into this device's pool failed midway: the caching allocator keeps it marked as
        recording (torch 2.11 and 2.14: "beginAllocateToPool: already recording"), so it is never
        captured into again; entries captured before keep theirs alive."""
        self.pools.pop(device, None)

    def release_unused_pools(self) -> None:
        """Forget every pool no live entry draws on (module docstring)."""
        live = {id(e.graph.pool) for e in self.entries.values()}
        for device, pool in list(self.pools.items()):
            if id(pool) not in live:
                del self.pools[device]
                if device.type == "cuda":
                    torch.cuda.empty_cache()

    def clear(self) -> None:
        """Drop every entry and block; the next capture starts a fresh pool."""
        for key in list(self.entries):
            self.drop(key)
        self.pools.clear()
        self.blocked.clear()
        self.retry.clear()
        self.stats.pool_bytes = 0
        self.stats.static_bytes = 0

    def described_blocks(self) -> dict[str, str]:
        return {describe_key(k): reason for k, reason in self.blocked.items()}

    def _pool_bytes(self) -> int:
        """Bytes held by the pools live entries draw on. Accounting only: a backend that cannot
        tell keeps the last figure rather than fail a capture."""
        pools = {id(e.graph.pool): e.graph for e in self.entries.values()}
        try:
            return sum(g.backend.pool_bytes(g.pool, g.device) for g in pools.values())
        except Exception as e:
            log.debug("[BCG] %s: pool accounting failed (%s); keeping %d bytes", self.name, e, self.stats.pool_bytes)
            return self.stats.pool_bytes
