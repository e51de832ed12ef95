"""GraphRunner: key a call, replay its captured graph, or run it eagerly and say why.

Capture happens only when asked: by :meth:`GraphRunner.capture` (a warm-up), or by a dispatch
with ``capture_first_call=True`` (capture on first sight: the first call of a signature is captured,
proven and answered with its eager output; later calls replay). A caller that knows how many calls
of the signature are left (``calls_left``, e.g. the steps left in a sampling run) lets the runner
weigh a first-sight capture: where the measured saving of those replays would not repay the
measured cost of a capture, the call runs eager under :data:`NOT_WORTH_IT`; when the signature
comes back in a later run (``calls_left`` larger again), the runs it was seen in count as evidence
of its future: it is captured once this run's calls times the runs seen would repay it. A caller
whose signatures come once per run (a key that holds the sampling step) cannot tell a new run by
``calls_left`` and counts the runs itself: it passes ``runs_seen`` (the earlier runs the signature
was met in) with ``calls_left`` as the calls of one run. Every call that does not replay
runs the callable eagerly on the live arguments and is counted under its reason in
:attr:`GraphRunner.stats` (a first-sight capture under :data:`FIRST_CALL`).

Keys. A call's key is the structure of its arguments (containers, constants, and shape, stride,
dtype and device of every tensor), the names of its opaque arguments, and ``key_extra``: anything
else the caller knows changes the computation. Opaque arguments (``opaque=("transformer_options",)``)
are passed to the callable as they are at capture and are not part of the key: the caller vouches
that ``key_extra`` describes whatever in them matters. Any other object in the arguments makes the
call eager with reason ``unkeyable argument``, never a wrong replay.

Replay. Tensor leaves are copied into the entry's static buffers on the current stream, the
schedule replays, and the output tree is cloned out of the pool (two calls of one shape, such as
cond and uncond, would otherwise return the same memory).

Serving contract. An entry serves a call only when all three hold:

* **proven**: right after its capture the runner ran the call eagerly on the live arguments, copied
  the same arguments into the static buffers, replayed, and found the output ``torch.equal`` to
  eager. An entry that fails the proof is never stored; its key is blocked with the reason
  ``replay not exact (max abs diff X)``. ``verify=True`` on a dispatch repeats the proof on a
  live call and drops the entry the same way if it fails.
* **bound**: the ``state`` the caller passes with the call equals the ``state`` it passed at
  capture. The caller puts there whatever the graph reads by address and the key cannot see
  (for a DiT: the addresses of weights and buffers, object patches). A mismatch drops the entry
  (the memory it read is no longer what it captured) and the call runs eager with that reason.
  A caller whose ``state`` can change during the capture itself (a process setting torch settles
  at the forward's first use) gives ``state_after_capture``: the entry is then bound to the state
  it returns once the proof passed, the one the capture and the proof both ran under.
* **held**: every other tensor the capture read that it did not make (a table an ``lru_cache``
  keeps, a tensor in an opaque argument: :mod:`~bcg_runtime.core.outside_reads` finds them at
  capture, however they are reached) is held by the entry, so its memory is never freed and reused
  under the graph, and is unchanged since capture: a write into one since drops the entry with a
  reason that names it. A write shows by the tensor's version counter, or, for an inference
  tensor (none: ComfyUI samples under ``torch.inference_mode``), by its bits against a copy taken
  at capture, compared once per ``state`` object the entry serves under (the caller takes one per
  run; every call where the state is None). Those the forward writes itself are held only (a
  replay writes them as eager does). A break is no read of the graph's beyond its arguments: it
  runs again at every replay and reads the live call (``OutsideReads.breaking``). A tensor read
  from an opaque argument is a constant of the graph, while the next call passes its own: it may
  serve only where the caller keys that argument's tensors by value (``opaque_keyed``); read from
  any other opaque argument (``transformer_options``), it fails the capture with its path, and the
  shape runs eager. A plain value the forward's Python reads from an opaque argument (a list that
  steers a branch) reaches no op, so no audit of ops sees it: the caller's ``watched_kwargs`` view
  sees it on the capture's plain run of the live call and fails the capture the same way.
  ``bound_storages`` tells the runner which storages the ``state`` covers (the model's weights,
  which ComfyUI patches in place by design); a mode whose capture runs code the dispatcher does
  not see (:attr:`CaptureStrategy.audits_reads` off: compiled kernels) skips the audit.

Tensors of one call must all sit on one device: a 0-dim CPU tensor passed to a CUDA kernel is read
as a host scalar at capture and frozen into the graph, so a call that mixes devices runs eager.

Decisions. :meth:`GraphRunner.decide` is the one place a call's fate is chosen: serve a proven
entry, capture now, or eager with a :class:`~bcg_runtime.core.reasons.Reason`; ``__call__``
carries it out. How a capture runs and what makes it acceptable is the caller's
:class:`CaptureStrategy`, passed per call (the exact modes: :data:`EXACT`).

Failure is safe. Anything raised inside a capture or its proof (out of memory, a Cancel, an op
that cannot be captured) resets the unproven graph and releases every pool no stored entry uses
before it goes on; nothing unproven is left to serve or to be captured into. An error then blocks
its key (eager from then on, with the error as the reason), except for transient failures (out
of memory, retried after the next :meth:`GraphRunner.begin_warmup`, and the caller's
``abort_errors`` such as a user's Cancel, which propagate); a replay
that raises drops the entry, blocks the key and reruns the call eagerly; limits on entries,
segments and pool memory stop capturing, never correctness; with ``RunnerLimits.evict_lru`` they
evict the least recently used entries instead (counted in ``stats.evictions``), so a stream of new
signatures runs at bounded memory.
"""

from __future__ import annotations

import contextlib
import enum
import gc
import logging
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Hashable, Iterable, NamedTuple

import torch

from . import reasons
from .backends import GraphBackend, backend_for
from .graph import BreakableGraph
from .host_copies import HostCopyStaging
from .host_reads import HostReads
from .outside_reads import HeldTensor, OutsideRead, OutsideReads, storage_key, storage_keys
from .reasons import Reason
from .stats import EntryStats, RunnerStats
from .trees import (
    MixedDevices,
    TensorSpec,
    UnkeyableArgument,
    clone_tree,
    flatten_inputs,
    make_static_buffer,
    outputs_equal,
    tensor_bytes,
    unflatten_inputs,
)

log = logging.getLogger(__name__)

NOT_CAPTURED = "not captured"
#: Reason prefix of the call that captured its signature on first sight (it returns the eager output).
FIRST_CALL = "first call, captured"
#: Reason of a first-sight call left eager because the calls left would not repay a capture.
NOT_WORTH_IT = Reason(
    reasons.NOT_WORTH_IT,
    "not captured yet: the calls left would not repay a capture (captured once the shape recurs enough to repay one)",
)
#: Signatures whose capture was put off are remembered up to this many (oldest forgotten first).
MAX_DEFERRED = 4096
#: Reason of an eager call whose entry was dropped because its ``state`` no longer matches.
STALE = Reason(reasons.STALE, "graph dropped: what it reads changed since capture (the model's fingerprint differs)")


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
    #: Eager runs before every later capture: one, for per-shape lazy work (a kernel's first launch
    #: at a new size). Each costs a whole forward, which is most of the first-call overhead.
    warmup_runs_after_first: int = 1
    #: At ``max_entries`` or the memory budget, drop the least recently used entries to make room
    #: for a new capture (when the last entry of a pool goes, the pool is released) instead of
    #: refusing it.
    evict_lru: bool = False


class CallKey(NamedTuple):
    structure: Hashable
    opaque: tuple[str, ...]
    extra: Hashable


class Action(enum.Enum):
    """The three things :meth:`GraphRunner.decide` can say about a call."""

    SERVE = "serve"  # its proven entry replays
    CAPTURE = "capture"  # capture and prove now, answer with eager
    EAGER = "eager"  # run eager, with the reason


SERVE, CAPTURE, EAGER = Action.SERVE, Action.CAPTURE, Action.EAGER


@dataclass(frozen=True)
class Decision:
    """The runner's decision for one call: ``action`` is :data:`SERVE` (``entry`` replays),
    :data:`CAPTURE` (capture and prove now, answer with eager) or :data:`EAGER` (``reason``)."""

    action: Action
    call: "_Call | None" = None
    entry: "_Entry | None" = None
    reason: Reason | str | None = None
    #: What a capture of the call needs besides it (key_extra, opaque, state).
    dispatch: dict = field(default_factory=dict)


class StateRefused(Exception):
    """Raised by a :class:`LazyState`'s ``take`` when the caller's state can serve no graph; the
    call runs eager with :attr:`reason`."""

    def __init__(self, reason: Reason | str):
        super().__init__(str(reason))
        self.reason = reason


class LazyState:
    """A caller's ``state`` for one call, taken only when the decision needs it: to check the
    call's entry against it, or to bind a capture to it. A call that runs eager whatever the state
    (not captured, blocked, its capture put off) never pays for taking it, so a run that can replay
    nothing takes none. ``take()`` returns the state or raises :class:`StateRefused`; it may also
    drop entries or disable the runner (the caller learning the state changed), which
    :meth:`GraphRunner.decide` reads after taking it."""

    __slots__ = ("take",)

    def __init__(self, take: Callable[[], Any]):
        self.take = take


@dataclass(frozen=True)
class CaptureStrategy:
    """How a mode captures and accepts a graph, given to the runner per call (never switched on
    and off inside it).

    ``capture_forward(fn)``: the callable the capture runs (its warm-up runs, the capture itself and
    the proof's eager run); the proof holds the replay bit-equal to it. ``accept(captured, fn)``:
    for a mode whose captured forward differs from ``fn`` by design (fast: compiled kernels), the
    owner's own judgement of the proven output against ``fn`` run plainly on the live call; None
    or the reason to refuse. The exact modes use :data:`EXACT`: capture ``fn`` itself, no ``accept``
    (bit-equality to ``fn`` is the whole test)."""

    capture_forward: Callable[[Callable], Callable] = staticmethod(lambda fn: fn)
    accept: Callable[[Any, Any], "str | None"] | None = None
    #: Record what the capture reads outside its inputs and its own memory (the serving contract's
    #: "held"). Off only where the capture runs kernels the dispatcher does not see (compiled code,
    #: whose dynamo would also trace the recording mode).
    audits_reads: bool = True


EXACT = CaptureStrategy()


class CaptureStatus(enum.Enum):
    CAPTURED = "captured"
    ALREADY_CAPTURED = "already captured"
    SKIPPED = "skipped"
    FAILED = "failed"
    #: Captured, but the replay was not ``torch.equal`` to eager: never stored, key blocked.
    NOT_EXACT = "not exact"


@dataclass
class CaptureResult:
    status: CaptureStatus
    label: str
    reason: str = ""
    entry: EntryStats | None = None
    #: The eager output of the live call (the truth the replay was compared with); set whenever
    #: the callable ran, so a caller returns it instead of running the call again.
    output: Any = None
    #: Bit-equality of the proof replay; None when no replay was made.
    exact: bool | None = None
    max_abs_diff: float | None = None

    @property
    def ok(self) -> bool:
        return self.status in (CaptureStatus.CAPTURED, CaptureStatus.ALREADY_CAPTURED)


_NEVER = object()


@dataclass
class _Entry:
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


@dataclass
class _Call:
    key: CallKey
    leaves: list[torch.Tensor]
    label: str
    device: torch.device | None


def _same_state(bound: Any, now: Any) -> bool:
    """Whether an entry bound to ``bound`` may serve under ``now``: the same object at once, else
    an equal one (a fingerprint walks its parts to say so)."""
    return bound is now or bound == now


class GraphRunner:
    """Captured entries of one callable family (one model), sharing one memory pool per device.

    ``backend``: a fixed backend (tests use the CPU stand-in); by default the real one for the
    inputs' device (CUDA), and calls on any other device run eagerly with that reason.
    """

    def __init__(
        self,
        backend: GraphBackend | None = None,
        limits: RunnerLimits = RunnerLimits(),
        name: str = "bcg",
        abort_errors: tuple[type[BaseException], ...] = (),
        stage_host_copies: bool = False,
        replay_host_reads: bool = False,
        bound_storages: Callable[[], set[int]] | None = None,
        opaque_keyed: Iterable[str] = (),
        state_after_capture: Callable[[Any], Any] | None = None,
        watched_kwargs: Callable[[dict], dict] | None = None,
    ):
        """``abort_errors``: exceptions that end a capture without blocking its key and propagate
        to the caller (a user's Cancel); the next warm-up retries that shape.
        ``stage_host_copies``: the callable copies constant host tensors to the device, which
        capture refuses; stage them through pinned buffers the entry holds
        (:mod:`~bcg_runtime.core.host_copies` says when that is exact).
        ``replay_host_reads``: the callable reads device values on the host, each determined by
        the call's key (the caller's contract); captures hand it the live call's values
        (:mod:`~bcg_runtime.core.host_reads`).
        ``bound_storages``: the storages (:func:`~bcg_runtime.core.outside_reads.storage_keys`)
        that the caller's ``state`` binds by address, asked at each capture; a capture's other
        outside reads are held and guarded (module docstring). None: only the inputs are bound.
        ``opaque_keyed``: opaque arguments whose tensors ``key_extra`` describes by value (a capture
        may read them); a capture that reads a tensor of any other opaque argument fails.
        ``state_after_capture``: given the ``state`` a call was captured with, the state to bind
        its proven entry to (module docstring, "bound"). None: the state passed.
        ``watched_kwargs``: given a call's keyword arguments, the ones a capture's run of the plain
        forward on the live call takes (the proof's eager run where the strategy captures ``fn``
        itself, the ``accept`` check's plain run where it does not); called once per such run. The
        caller's view raises :class:`UnkeyedOpaqueRead` where the forward's Python reads what the
        key does not hold (the comfy layer watches ``transformer_options``'s bookkeeping entries),
        which fails the capture like any error in it. Every other run, the eager fallback after a
        failed capture included, takes the call's own arguments."""
        self.name = name
        self.watched_kwargs = watched_kwargs
        self.bound_storages = bound_storages
        self.opaque_keyed = frozenset(opaque_keyed)
        self.state_after_capture = state_after_capture
        self.abort_errors = abort_errors
        self.stage_host_copies = stage_host_copies
        self.replay_host_reads = replay_host_reads
        self.limits = limits
        self.stats = RunnerStats()
        self._fixed_backend = backend
        self._backends: dict[str, GraphBackend] = {}
        self._pools: dict[torch.device, Any] = {}
        self._entries: dict[CallKey, _Entry] = {}
        self._blocked: dict[CallKey, str] = {}
        #: Keys whose capture failed for a passing reason (out of memory): retried after begin_warmup().
        self._retry: dict[CallKey, str] = {}
        self._disabled: str | None = None
        self._capture_stopped: str | None = None
        self._warned: set[str] = set()
        #: Devices this runner has captured on (their lazy init is done; see RunnerLimits).
        self._captured_on: set[torch.device] = set()
        #: Signatures put off: (calls left when last seen, runs seen in).
        self._deferred: dict[CallKey, tuple[int, int]] = {}

    # ------------------------------------------------------------------ dispatch
    def decide(
        self,
        args: tuple = (),
        kwargs: dict | None = None,
        *,
        key_extra: Hashable = (),
        opaque: Iterable[str] = (),
        label: str | None = None,
        state: Any = None,
        capture_first_call: bool = False,
        calls_left: int | None = None,
        runs_seen: int | None = None,
    ) -> Decision:
        """What to do with this call: :data:`SERVE` its proven entry, :data:`CAPTURE` it now, or
        run it :data:`EAGER` with the reason. The one place the runner decides; :meth:`__call__`
        carries the decision out. An entry bound to another ``state`` is dropped here. A
        :class:`LazyState` is taken only past the checks that need no state."""
        if self._disabled is not None:
            return self._disabled_decision()
        try:
            call = self._key(args, kwargs or {}, key_extra, opaque, label)
        except MixedDevices as e:
            return Decision(EAGER, reason=Reason(reasons.LIMIT, str(e)))
        except UnkeyableArgument as e:
            return Decision(EAGER, reason=Reason(reasons.OPTIONS, f"unkeyable argument {e.path}"))
        had_entry = call.key in self._entries
        if not had_entry:
            reason = self._blocked.get(call.key) or self._retry.get(call.key)
            if not capture_first_call or reason is not None:
                return Decision(
                    EAGER, call, reason=reason or Reason(reasons.NOT_CAPTURED, f"{NOT_CAPTURED}: {call.label}")
                )
            if self._put_off(call, calls_left, runs_seen):
                return Decision(EAGER, call, reason=NOT_WORTH_IT)
        refused = None
        if isinstance(state, LazyState):
            try:
                state = state.take()
            except StateRefused as e:
                refused = e.reason
        if self._disabled is not None:  # taking the state turned the runner off for the run
            return self._disabled_decision()
        if refused is not None:
            return Decision(EAGER, call, reason=refused)
        entry = self._entries.get(call.key)  # taking the state may have dropped entries bound to an older one
        dropped = STALE
        if entry is not None:
            bound = _same_state(entry.state, state)
            written = entry.outside_written(state) if bound else None
            if not bound or written is not None:
                dropped = outside_written_reason(written) if written is not None else STALE
                self._drop(call.key)
                log.warning("[BCG] %s: %s: %s", self.name, call.label, dropped)
                entry = None
        if entry is not None:
            return Decision(SERVE, call, entry)
        if had_entry:  # its entry was bound to another state, or a tensor it holds was written: dropped
            if not capture_first_call:
                return Decision(EAGER, call, reason=dropped)
            if self._put_off(call, calls_left, runs_seen):
                return Decision(EAGER, call, reason=NOT_WORTH_IT)
        return Decision(CAPTURE, call, dispatch={"key_extra": key_extra, "opaque": opaque, "state": state})

    def _disabled_decision(self) -> Decision:
        return Decision(EAGER, reason=Reason(reasons.DISABLED, f"disabled: {self._disabled}"))

    def __call__(
        self,
        fn: Callable,
        args: tuple = (),
        kwargs: dict | None = None,
        *,
        key_extra: Hashable = (),
        opaque: Iterable[str] = (),
        label: str | None = None,
        state: Any = None,
        verify: bool = False,
        capture_first_call: bool = False,
        calls_left: int | None = None,
        runs_seen: int | None = None,
        strategy: "CaptureStrategy | None" = None,
    ) -> Any:
        """Replay the captured entry for this call, or run ``fn`` eagerly and count the reason.

        ``state``: see the module docstring (an entry serves only calls with the state it was
        captured under). ``verify``: also run the call eagerly and compare; an entry whose replay
        differs is dropped and blocked, and the eager output is returned. ``capture_first_call``: a
        call with no entry (and no block) is captured and proven now, and gets the eager output.
        ``strategy``: how a capture of this call runs and is accepted (:class:`CaptureStrategy`).
        """
        kwargs = kwargs or {}
        decision = self.decide(
            args, kwargs, key_extra=key_extra, opaque=opaque, label=label, state=state,
            capture_first_call=capture_first_call, calls_left=calls_left, runs_seen=runs_seen,
        )  # fmt: skip
        return self.execute(decision, fn, args, kwargs, verify=verify, strategy=strategy)

    def execute(
        self,
        decision: Decision,
        fn: Callable,
        args: tuple,
        kwargs: dict,
        *,
        verify: bool = False,
        strategy: "CaptureStrategy | None" = None,
    ) -> Any:
        """Carry out a :meth:`decide` for this very call: replay, capture on sight, or run eager."""
        if decision.action is EAGER:
            return self.run_eager(fn, args, kwargs, decision.reason)
        call = decision.call
        if decision.action is CAPTURE:
            return self._capture_on_sight(fn, args, kwargs, call, strategy=strategy, **decision.dispatch)
        try:
            out = clone_tree(self._replay(decision.entry, call.leaves))
        except Exception as e:  # a poisoned entry must never be replayed again
            reason = self._reject(call, Reason(reasons.CAPTURE_FAILED, f"replay failed: {one_line(e)}"))
            return self.run_eager(fn, args, kwargs, reason)
        if verify:
            truth = fn(*args, **kwargs)
            exact, diff = outputs_equal(out, truth)
            log.log(logging.INFO if exact else logging.WARNING, "[BCG] %s: verify %s: replay %s eager (max abs diff %g)",
                    self.name, call.label, "==" if exact else "!=", diff)  # fmt: skip
            if not exact:
                self.stats.record_eager(self._reject(call, not_exact_reason(diff)))
                return truth
        decision.entry.stats.hits += 1
        self.stats.hits += 1
        self._entries[call.key] = self._entries.pop(call.key)  # most recently used last (evict_lru)
        return out

    def _put_off(self, call: _Call, calls_left: int | None, runs_seen: int | None = None) -> bool:
        """Should this first-sight capture wait? Yes while the calls it can expect cannot repay it
        by the measured costs. Expected calls: the calls left in this run times the runs the
        signature was seen in (a new run is told by ``calls_left`` growing: a run counts down), on
        the reasoning that a shape seen in n runs comes back about as often again. So a batch of
        all-distinct shapes stays eager, and a shape that recurs is captured once it repays.
        ``runs_seen`` given: the caller counted the runs (``calls_left`` is then one run's calls),
        and counting them again here would make the expectation grow with the square of the runs."""
        if calls_left is None:
            return False
        before, runs = self._deferred.get(call.key, (None, 1))
        if runs_seen is not None:
            runs = runs_seen
        elif before is not None and calls_left > before:
            runs += 1
        expected = calls_left * runs
        if self.stats.costs.repays(expected):
            self._deferred.pop(call.key, None)
            return False
        if before is None:
            costs = self.stats.costs
            log.info("[BCG] %s: %s: first call left eager: %d calls to come would save about %.0f ms, a capture costs %.0f ms",
                     self.name, call.label, expected, 1000 * expected * costs.saving_s, 1000 * costs.overhead_s)  # fmt: skip
            if len(self._deferred) >= MAX_DEFERRED:
                del self._deferred[next(iter(self._deferred))]
        self._deferred[call.key] = (calls_left, runs)
        return True

    def _capture_on_sight(self, fn, args, kwargs, call: _Call, key_extra, opaque, state, strategy) -> Any:
        """Capture and prove the signature of a live call; count the call and return eager's output."""
        result = self.capture(
            fn, args, kwargs, key_extra=key_extra, opaque=opaque, label=call.label, state=state, strategy=strategy
        )
        if result.status is CaptureStatus.CAPTURED:
            reason = Reason(reasons.FIRST_CALL, f"{FIRST_CALL}: {call.label}")
        else:
            reason = result.reason or Reason(reasons.NOT_CAPTURED, f"{NOT_CAPTURED}: {call.label}")
        if result.output is None:  # the capture was skipped before anything ran
            return self.run_eager(fn, args, kwargs, reason)
        self.stats.record_eager(reason)
        return result.output

    def _replay(self, entry: _Entry, leaves: list[torch.Tensor]) -> Any:
        """Copy the live tensors into the static buffers (current stream) and replay; returns the
        entry's output tree in the pool (clone it before the next replay)."""
        self._copy_inputs(entry, leaves)
        entry.graph.replay()
        return entry.output

    @staticmethod
    def _copy_inputs(entry: _Entry, leaves: list[torch.Tensor]) -> None:
        """Copy the live tensors into the static buffers the graphs read (on the current stream)."""
        for static, live in zip(entry.static_leaves, leaves):
            static.copy_(live)

    def _reject(self, call: _Call, reason: str) -> str:
        """Drop the entry of ``call`` and block its key for good; returns the reason."""
        if call.key in self._entries:
            self._drop(call.key)
        self._blocked[call.key] = reason
        log.error("[BCG] %s: %s for %s: entry dropped, this shape runs eager", self.name, reason, call.label)
        return reason

    def run_eager(self, fn: Callable, args: tuple, kwargs: dict, reason: str) -> Any:
        """Run ``fn`` eagerly, counted under ``reason`` (also for callers that decided it themselves)."""
        self.count_eager(reason)
        return fn(*args, **kwargs)

    def count_eager(self, reason: str) -> None:
        """Count one call that runs eager under ``reason`` (a debug line the first time: the run's
        summary line reports it), for a caller that runs it itself."""
        self.stats.record_eager(reason)
        if reason not in self._warned:
            self._warned.add(reason)
            log.debug("[BCG] %s: eager call (%s)", self.name, reason)  # the run's summary line counts it

    # ------------------------------------------------------------------ capture
    def capture(
        self,
        fn: Callable,
        args: tuple = (),
        kwargs: dict | None = None,
        *,
        key_extra: Hashable = (),
        opaque: Iterable[str] = (),
        label: str | None = None,
        state: Any = None,
        strategy: CaptureStrategy | None = None,
    ) -> CaptureResult:
        """Capture ``fn`` for the signature of these arguments and prove it (idempotent).

        Runs ``limits.warmup_runs`` eager calls (``warmup_runs_after_first`` once the device has
        a capture) and one capture on static copies of the tensor
        arguments, then the proof (module docstring): the eager output of the live call is
        ``result.output`` whenever ``fn`` ran, so the caller need not run it again. An entry
        captured under another ``state`` is dropped and captured again. ``strategy`` (default
        :data:`EXACT`): what the capture runs and how a proven entry is accepted.
        """
        return self._capture(fn, args, kwargs or {}, key_extra, opaque, label, state, strategy or EXACT)

    def _capture(self, fn, args, kwargs, key_extra, opaque, label, state, strategy: CaptureStrategy) -> CaptureResult:
        try:
            call = self._key(args, kwargs, key_extra, opaque, label)
        except MixedDevices as e:
            return CaptureResult(CaptureStatus.SKIPPED, label or "?", str(e))
        except UnkeyableArgument as e:
            return CaptureResult(CaptureStatus.SKIPPED, label or "?", f"unkeyable argument {e.path}")
        entry = self._entries.get(call.key)
        if entry is not None and not _same_state(entry.state, state):
            log.info("[BCG] %s: %s: %s; capturing again", self.name, call.label, STALE)
            self._drop(call.key)
        elif entry is not None:
            return CaptureResult(
                CaptureStatus.ALREADY_CAPTURED, call.label, entry=entry.stats, exact=True, max_abs_diff=0.0
            )
        if self.limits.evict_lru:
            self._make_room()
        skip = self._capture_refusal(call)
        if skip is not None:
            return CaptureResult(CaptureStatus.SKIPPED, call.label, skip)
        try:
            return self._capture_entry(call, fn, args, kwargs, state, strategy)
        except BaseException as e:
            # Whatever raised (out of memory, a Cancel, an op that cannot be captured), the failed
            # graph was reset and its pool released on the way out of _capture_entry.
            if isinstance(e, self.abort_errors) or not isinstance(e, Exception):
                raise  # a Cancel: nothing is blocked, the next warm-up tries this shape again
            reason = self._capture_failed(call, e)
        # Outside the except block, so the error's traceback (which holds the failed capture's
        # frames, its pool among them) is gone before the eager fallback allocates.
        self._return_cached_memory(call.device)
        return CaptureResult(CaptureStatus.FAILED, call.label, reason, output=fn(*args, **kwargs))

    def _capture_entry(self, call: _Call, fn, args, kwargs, state, strategy: CaptureStrategy):
        capture_fn = strategy.capture_forward(fn)
        backend = self._backend(call.device)
        pool = self._pools.get(call.device)
        if pool is None:
            pool = self._pools[call.device] = backend.new_pool(call.device)
        static_leaves = [make_static_buffer(t) for t in call.leaves]
        _shift_floats(static_leaves)  # capture on other values than the proof (see _prove)
        keyed = {k: v for k, v in kwargs.items() if k not in call.key.opaque}
        s_args, s_kwargs = unflatten_inputs((tuple(args), keyed), static_leaves)
        s_kwargs.update((k, kwargs[k]) for k in call.key.opaque if k in kwargs)  # passed as they are
        audit = OutsideReads(call.device.type) if strategy.audits_reads else None
        graph = BreakableGraph(
            backend, pool, call.device, self.limits.max_segments, break_scope=audit.breaking if audit else None
        )
        staging = HostCopyStaging(call.device.type) if self.stage_host_copies and call.device.type != "cpu" else None
        reads = HostReads(call.device.type) if self.replay_host_reads else None
        nothing = contextlib.nullcontext
        start = time.perf_counter()
        try:
            with _collector_paused():
                if reads:  # the live call's values: what every call of this key reads
                    with reads.recording():
                        fn(*args, **kwargs)
                runs = (
                    self.limits.warmup_runs_after_first if call.device in self._captured_on else self.limits.warmup_runs
                )
                runs = max(runs, 1) if staging else runs  # staging records its buffers in the last one
                with backend.capture_stream(call.device):
                    for run in range(runs):
                        with reads.replaying() if reads else nothing():
                            with staging.recording() if staging and run == runs - 1 else nothing():
                                capture_fn(*s_args, **s_kwargs)
                backend.synchronize(call.device)
                with reads.replaying() if reads else nothing(), staging.replaying() if staging else nothing():
                    with audit or nothing():
                        output = graph.capture(capture_fn, s_args, s_kwargs)
                backend.synchronize(call.device)
                outside = self._outside(audit, static_leaves, s_kwargs, call.key.opaque)
        except BaseException:
            # A pool whose capture failed midway stays marked as recording inside the caching
            # allocator (torch 2.11 and 2.14: "beginAllocateToPool: already recording"), so it is
            # never captured into again: later shapes start a fresh pool; entries captured before
            # keep theirs alive.
            self._pools.pop(call.device, None)
            graph.reset()
            raise
        seconds = time.perf_counter() - start

        # Device bytes (host_buffers are pinned host memory); the held tensors' bit copies are the entry's own.
        static_bytes = (
            tensor_bytes(static_leaves)
            + graph.bridge_bytes
            + tensor_bytes([h.bits for h in outside if h.bits is not None])
        )
        entry_stats = EntryStats(
            label=call.label,
            segments=graph.num_segments,
            breaks=graph.num_breaks,
            capture_seconds=seconds,
            pool_bytes_after=0,
            static_bytes=static_bytes,
        )
        entry = _Entry(graph, static_leaves, output, entry_stats, state, staging.buffers if staging else [], outside)
        watch = self.watched_kwargs or (lambda own: own)
        try:
            result = self._prove(entry, call, capture_fn, args, watch(kwargs) if capture_fn is fn else kwargs)
            if result.status is CaptureStatus.CAPTURED and strategy.accept is not None:
                result = self._accept(call, result, strategy.accept, fn, args, watch(kwargs))
            if result.status is CaptureStatus.CAPTURED and self.state_after_capture is not None:
                entry.state = self.state_after_capture(state)
        except BaseException:
            # Out of memory or a Cancel in the proof (its eager run needs a forward's activations
            # beside the new pool), or the caller's state_after_capture raising: the graph, not
            # stored, and its pool go before the error does.
            graph.reset()
            self._release_unused_pools()
            raise
        if result.status is not CaptureStatus.CAPTURED:
            graph.reset()  # never stored: nothing unproven can serve
            self._release_unused_pools()
            return result
        self._entries[call.key] = entry
        self._captured_on.add(call.device)
        self.stats.static_bytes += static_bytes
        self.stats.pool_bytes = entry_stats.pool_bytes_after = self._pool_bytes()
        self.stats.captures += 1
        self.stats.capture_seconds += seconds
        log.info(
            "[BCG] %s: captured %s in %.2fs: %d segments, %d breaks, pool %.1f MiB, replay exact%s",
            self.name, call.label, seconds, graph.num_segments, graph.num_breaks, self.stats.pool_bytes / 2**20,
            f"; holds {len(outside)} tensor(s) it reads outside its arguments and weights: "
            + ", ".join(held.read.describe() for held in outside[:4]) if outside else "",
        )  # fmt: skip
        return result

    def _outside(
        self, audit: OutsideReads | None, static_leaves: list, s_kwargs: dict, opaque: tuple[str, ...]
    ) -> list[HeldTensor]:
        """The capture's outside reads past its static inputs and the ``state``'s storages, each
        held with how a write into it shows (:meth:`HeldTensor.of`: its version, a copy of its
        bits for an inference tensor, nothing for one the forward writes itself). Raises :class:`UnkeyedOpaqueRead` for a tensor read from an
        opaque argument outside ``opaque_keyed`` (module docstring)."""
        if audit is None:
            return []
        bound = storage_keys(static_leaves)
        if self.bound_storages is not None:
            bound |= self.bound_storages()
        outside = audit.outside(bound)
        unkeyed = {
            key: path
            for name in opaque
            if name in s_kwargs and name not in self.opaque_keyed
            for path, key in _tensor_paths(s_kwargs[name], name)
        }
        for read in outside:
            path = unkeyed.get(storage_key(read.tensor))
            if path is not None:
                raise UnkeyedOpaqueRead(
                    f"the forward reads {path} ({read.describe()}), a tensor of an opaque argument the key "
                    "does not hold: a replay would read the captured call's"
                )
        return [HeldTensor.of(read) for read in outside]

    def _prove(self, entry: _Entry, call: _Call, fn: Callable, args: tuple, kwargs: dict) -> CaptureResult:
        """Eager on the live call, then a replay of the same inputs: keep the entry only if equal.

        The capture ran on shifted copies of the floating-point inputs (:func:`_shift_floats`), so
        anything the graph froze at capture instead of computing at replay (a value read on the
        host, work on a stream the capture did not see, a tensor computed once and cached) shows
        up here as a difference, not later as a wrong image."""
        sync = entry.graph.backend.synchronize
        sync(call.device)
        start = time.perf_counter()
        truth = fn(*args, **kwargs)
        sync(call.device)
        eager_s = time.perf_counter() - start
        try:
            replayed = self._replay(entry, call.leaves)
            sync(call.device)
            replay_s = time.perf_counter() - start - eager_s
            exact, diff = outputs_equal(replayed, truth)
        except Exception as e:
            reason = self._reject(call, Reason(reasons.CAPTURE_FAILED, f"replay failed: {one_line(e)}"))
            return CaptureResult(CaptureStatus.FAILED, call.label, reason, output=truth)
        if call.device in self._captured_on:  # a device's first capture carries lazy init: not a cost sample
            self.stats.costs.record(entry.stats.capture_seconds, eager_s, replay_s)
        if not exact:
            reason = self._reject(call, not_exact_reason(diff))
            return CaptureResult(
                CaptureStatus.NOT_EXACT, call.label, reason, output=truth, exact=False, max_abs_diff=diff
            )
        return CaptureResult(
            CaptureStatus.CAPTURED, call.label, entry=entry.stats, output=truth, exact=True, max_abs_diff=0.0
        )

    def _accept(
        self, call: _Call, result: CaptureResult, accept: Callable, fn: Callable, args: tuple, kwargs: dict
    ) -> CaptureResult:
        """The strategy's ``accept`` on a proven entry, against ``fn`` run plainly on the live call."""
        plain = fn(*args, **kwargs)
        try:
            refusal = accept(result.output, plain)
        except Exception as e:  # a check that cannot judge this output does not let it serve
            refusal = f"check failed: {one_line(e)}"
        if refusal is None:
            return result
        return CaptureResult(
            CaptureStatus.FAILED, call.label, self._reject(call, Reason(reasons.NOT_EXACT, refusal)), output=plain
        )

    def _capture_failed(self, call: _Call, error: Exception) -> Reason:
        """Record why a capture failed; returns the reason the call runs eager under."""
        self.stats.capture_failures += 1
        if isinstance(error, torch.OutOfMemoryError):
            # Memory is a passing condition: stop capturing for now, retry at the next warm-up.
            reason = Reason(reasons.CAPTURE_FAILED, "capture failed: out of memory (retried at the next warm-up)")
            self._capture_stopped = "out of memory during capture"
            self._retry[call.key] = reason
        else:
            reason = self._blocked[call.key] = Reason(reasons.CAPTURE_FAILED, f"capture failed: {one_line(error)}")
        log.warning("[BCG] %s: %s for %s; this shape runs eager", self.name, reason, call.label)
        return reason

    @staticmethod
    def _return_cached_memory(device: torch.device | None) -> None:
        if device is not None and device.type == "cuda":
            torch.cuda.empty_cache()

    def _make_room(self) -> None:
        """Evict least recently used entries until one more fits under ``max_entries`` and the budget.

        A pool whose last entry goes is released (and the CUDA cache emptied), so its memory really
        returns to the device; a pool shared with live entries keeps its reserved memory for them
        and for the next captures, which reuse its free blocks.
        """
        budget = self.limits.memory_budget_bytes
        while self._entries and (
            len(self._entries) >= self.limits.max_entries or (budget is not None and self.memory_bytes >= budget)
        ):
            key = next(iter(self._entries))
            entry = self._entries[key]
            self._drop(key)
            self.stats.evictions += 1
            log.info("[BCG] %s: evicted %s (least recently used) to make room: graphs hold %.1f MiB",
                     self.name, entry.stats.label, self.memory_bytes / 2**20)  # fmt: skip

    def set_memory_budget(self, budget_bytes: int | None) -> None:
        """Change the graph memory budget (None: no limit); applies to the next capture."""
        self.limits = replace(self.limits, memory_budget_bytes=budget_bytes)

    def begin_warmup(self) -> None:
        """A warm-up starts: shapes that failed for a passing reason (out of memory) may try again."""
        self._retry.clear()
        self._capture_stopped = None

    def retain(self, state: Any) -> int:
        """Drop every entry captured under another ``state`` (their memory goes back to the pool);
        returns how many were dropped. Dispatch drops such entries on sight anyway; this frees
        them as soon as the caller knows the state changed. The entries kept are bound to
        ``state`` itself, the equal state's new object: each call compares its entry's state with
        the run's, and the same object compares at once where an equal one is walked part by part."""
        stale = []
        for key, entry in self._entries.items():
            if _same_state(entry.state, state):
                entry.state = state
            else:
                stale.append(key)
        for key in stale:
            self._drop(key)
        return len(stale)

    def _capture_refusal(self, call: _Call) -> str | None:
        if self._disabled is not None:
            return Reason(reasons.DISABLED, f"disabled: {self._disabled}")
        if call.key in self._blocked:
            return self._blocked[call.key]
        if call.key in self._retry:
            return self._retry[call.key]
        if self._capture_stopped is not None:
            return Reason(reasons.LIMIT, f"capturing stopped: {self._capture_stopped}")
        if call.device is None or self._backend(call.device) is None:
            where = call.device.type if call.device is not None else "no tensor inputs"
            return Reason(reasons.DISABLED, f"not capturable: inputs on {where}, CUDA graphs need CUDA tensors")
        if len(self._entries) >= self.limits.max_entries:
            return Reason(reasons.LIMIT, f"entry limit reached ({self.limits.max_entries} captured shapes)")
        budget = self.limits.memory_budget_bytes
        if budget is not None and self.memory_bytes >= budget:
            return Reason(
                reasons.LIMIT,
                f"memory budget reached ({self.memory_bytes / 2**20:.0f} of {budget / 2**20:.0f} MiB in graphs)",
            )
        return None

    # ------------------------------------------------------------------ state
    @property
    def memory_bytes(self) -> int:
        """Graph pool plus static input and bridge buffers: what the graphs keep resident."""
        return self.stats.pool_bytes + self.stats.static_bytes

    @property
    def disabled_reason(self) -> str | None:
        return self._disabled

    def disable(self, reason: str) -> None:
        """Every call runs eager with ``disabled: reason``; captures are refused. Entries are kept."""
        self._disabled = reason

    def enable(self) -> None:
        self._disabled = None

    def entries(self) -> list[EntryStats]:
        return [e.stats for e in self._entries.values()]

    def blocked(self) -> dict[str, str]:
        """Blocked signatures (described) and why."""
        return {_describe(k): reason for k, reason in self._blocked.items()}

    def is_captured(
        self,
        args: tuple = (),
        kwargs: dict | None = None,
        *,
        key_extra: Hashable = (),
        opaque: Iterable[str] = (),
        state: Any = None,
    ) -> bool:
        """True when a call with these arguments and ``state`` would replay."""
        try:
            entry = self._entries.get(self._key(args, kwargs or {}, key_extra, opaque, None).key)
        except UnkeyableArgument:
            return False
        return entry is not None and _same_state(entry.state, state)

    def reset(self) -> None:
        """Drop every entry, block and stop; the next capture starts a fresh pool.

        Pool memory returns to the caching allocator only once all graphs drawing on it are gone;
        call ``torch.cuda.empty_cache()`` afterwards to give it back to the device.
        """
        for key in list(self._entries):
            self._drop(key)
        self._pools.clear()
        self._blocked.clear()
        self._retry.clear()
        self._capture_stopped = None
        self.stats.pool_bytes = 0
        self.stats.static_bytes = 0

    def _drop(self, key: CallKey) -> None:
        entry = self._entries.pop(key)
        entry.graph.reset()
        self.stats.static_bytes -= entry.stats.static_bytes
        self._release_unused_pools()
        self.stats.pool_bytes = self._pool_bytes()

    def _release_unused_pools(self) -> None:
        """Forget every pool no live entry draws on, so the next capture starts a fresh one.

        Never capture again into a pool whose graphs are all gone: torch 2.11's pinned-host
        allocator drops its record of the pool with its last graph, and the next ``capture_begin``
        on that pool id fails an internal assert (seen on the H200) after the device allocator has
        already started routing into it. Releasing the pool here (outside any capture) also gives
        its memory back to the device.
        """
        live = {id(e.graph.pool) for e in self._entries.values()}
        for device, pool in list(self._pools.items()):
            if id(pool) not in live:
                del self._pools[device]
                if device.type == "cuda":
                    torch.cuda.empty_cache()

    def _pool_bytes(self) -> int:
        """Bytes held by the pools that live entries draw on (one per device, more after a failure).

        Accounting only: a backend that cannot tell keeps the last figure rather than fail a capture."""
        pools = {id(e.graph.pool): e.graph for e in self._entries.values()}
        try:
            return sum(g.backend.pool_bytes(g.pool, g.device) for g in pools.values())
        except Exception as e:
            log.debug("[BCG] %s: pool accounting failed (%s); keeping %d bytes", self.name, e, self.stats.pool_bytes)
            return self.stats.pool_bytes

    # ------------------------------------------------------------------ helpers
    def _backend(self, device: torch.device) -> GraphBackend | None:
        if self._fixed_backend is not None:
            return self._fixed_backend if self._fixed_backend.device_type == device.type else None
        if device.type not in self._backends:
            backend = backend_for(device)
            if backend is None:
                return None
            self._backends[device.type] = backend
        return self._backends[device.type]

    @staticmethod
    def _key(args: tuple, kwargs: dict, key_extra: Hashable, opaque: Iterable[str], label: str | None) -> _Call:
        opaque = tuple(sorted(opaque))
        keyed_kwargs = {k: v for k, v in kwargs.items() if k not in opaque}
        leaves, structure = flatten_inputs((tuple(args), keyed_kwargs))
        key = CallKey(structure, opaque, key_extra)
        devices = {t.device for t in leaves}
        if len(devices) > 1:
            raise MixedDevices(devices)
        device = leaves[0].device if leaves else None
        return _Call(key, leaves, label or _describe_leaves(leaves), device)

    def __repr__(self) -> str:
        return (
            f"GraphRunner({self.name!r}, entries={len(self._entries)}, hits={self.stats.hits}, "
            f"eager={sum(self.stats.eager.values())}, disabled={self._disabled!r})"
        )


#: Capture-time inputs are the live floating-point inputs times this (plus a small offset), so that
#: the proof replay, on the live values, differs from the capture's values everywhere.
CAPTURE_SHIFT = 1.0625


#: The dtypes :func:`_shift_floats` shifts (float8 and other storage-only types have no arithmetic).
_SHIFTED_DTYPES = frozenset(
    {torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128}
)


class UnkeyedOpaqueRead(RuntimeError):
    """A capture read something of an opaque argument that the call's key does not describe: a
    tensor (seen by the outside-reads audit), or an entry the caller's ``watched_kwargs`` view
    watches (seen by the view)."""


def _tensor_paths(value: Any, path: str, depth: int = 0):
    """``(path, storage key)`` of the tensors in an opaque argument's dicts, lists and tuples."""
    if isinstance(value, torch.Tensor):
        key = storage_key(value)
        if key is not None:
            yield path, key
    elif depth < 6 and isinstance(value, dict):
        for k, v in value.items():
            yield from _tensor_paths(v, f"{path}[{k!r}]", depth + 1)
    elif depth < 6 and isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _tensor_paths(v, f"{path}[{i}]", depth + 1)


def _shift_floats(tensors: list[torch.Tensor]) -> None:
    """Shift floating-point tensors in place (``t * 1.0625 + 1/32``); integer and bool tensors,
    which may steer indexing and masks, keep their values."""
    for t in tensors:
        if t.dtype in _SHIFTED_DTYPES:
            t.mul_(CAPTURE_SHIFT).add_(1 / 32)


@contextlib.contextmanager
def _collector_paused():
    """Keep Python's cyclic collector off until the capture is over.

    A ``torch.cuda.MemPool`` (or graph) in a reference cycle, e.g. held by the traceback of an
    earlier failed or cancelled capture, is destroyed whenever the collector runs; if that is
    during a capture its destructor asserts that no capture is underway and the process aborts
    (seen on the H200, torch 2.11: ``MemPool::~MemPool`` -> ``synchronize_and_free_events``).
    Unlike ``torch.cuda.graph`` this does not collect first: cyclic garbage waits for the next
    collection after the capture, outside it, since a full collection in a ComfyUI process can take
    most of a first-call capture's time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _describe_leaves(leaves: list[torch.Tensor]) -> str:
    return " ".join(TensorSpec.of(t).describe() for t in leaves) or "no tensors"


def _describe(key: CallKey) -> str:
    specs = []

    def walk(node: Any) -> None:
        if isinstance(node, tuple):
            if len(node) == 2 and node[0] == "T" and isinstance(node[1], TensorSpec):
                specs.append(node[1].describe())
                return
            for item in node:
                walk(item)

    walk(key.structure)
    return " ".join(specs) + (f" {key.extra}" if key.extra else "")


def not_exact_reason(diff: float) -> Reason:
    return Reason(reasons.NOT_EXACT, f"replay not exact (max abs diff {diff:g})")


def one_line(e: BaseException) -> str:
    """``'TypeName: first line of the message'`` (at most 300 characters): an error as a reason a
    user reads in a report or a counter."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]
