"""GraphRunner: key a call, replay its proven graph, or run it eagerly and count why.

One call's fate, in two phases that return values and never call the caller back: ``lookup`` (the
key, then ``verdict`` on it) gives a final eager :class:`~.dispatch.Decision` where the caller's
state cannot matter (disabled, unkeyable, not captured, blocked, put off by the capture gate), else a
:class:`~.dispatch.Pending`; the caller takes its state (a DiT's: the model's fingerprint) and
``resolve(pending, state)`` serves the entry bound to an equal state, captures, or runs eager with
the reason. ``execute`` carries a decision out.

Serving contract. An entry serves a call only when all three hold:

* **proven**: right after its capture, its replay of the live call equalled eager bit for bit
  (:mod:`.capture`); one that fails is never stored and its key is blocked. ``verify``, and the
  first call of another ``variant`` of its key (PROVE), repeat the proof on a live call; a caller
  that rewrote calls to share a key gives the call as received (:class:`~.dispatch.Reference`).
* **bound**: the call's ``state`` equals the one the entry was bound to (what the graph reads by
  address and the key cannot see: weights, object patches). A mismatch drops the entry.
* **held**: every other tensor the capture read is held by the entry and unchanged since (a write
  drops the entry with a reason naming it).

Failure is safe. Anything raised inside a capture or its proof resets the unproven graph and
releases every pool no stored entry uses; the error then blocks its key, except out of memory
(retried after the next :meth:`GraphRunner.begin_warmup`) and the ``abort_errors`` (a user's
Cancel), which propagate. A replay that raises blocks its key and reruns the call eagerly. Limits
on entries, segments and memory stop capturing, never correctness; with ``RunnerLimits.evict_lru``
they evict the least recently used entries instead.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, Callable, Hashable, Iterable

import torch

from . import capture, reasons
from .backends import GraphBackend, backend_for
from .capture import UNBOUND, CaptureOptions, CaptureResult, CaptureStatus, CaptureStrategy, StateBinding
from .dispatch import (
    FIRST_CALL,
    NO_GATE,
    NOT_WORTH_IT,
    PLAIN,
    STALE,
    Action,
    Call,
    CaptureGate,
    Decision,
    Dispatch,
    Gate,
    Keyed,
    Pending,
    Reference,
    key_call,
    not_captured,
    unkeyable,
)
from .entries import DEFAULT_LIMITS, EntryTable, RunnerLimits, outside_written_reason, same_state
from .reasons import Reason, one_line
from .stats import EntryStats, RunnerStats
from .trees import MixedDevices, UnkeyableArgument, clone_tree, outputs_equal

log = logging.getLogger(__name__)


class GraphRunner:
    """Proven graphs of one callable family (one model), sharing one memory pool per device.

    ``backend``: a fixed backend (tests use the CPU stand-in); by default the real one for the
    inputs' device (CUDA), and calls on any other device run eagerly with that reason.
    ``abort_errors``: exceptions that end a capture without blocking its key and propagate (a
    user's Cancel). ``options``: what every capture does (:class:`~.capture.CaptureOptions`)."""

    def __init__(
        self,
        backend: GraphBackend | None = None,
        limits: RunnerLimits = DEFAULT_LIMITS,
        name: str = "bcg",
        abort_errors: tuple[type[BaseException], ...] = (),
        options: CaptureOptions = capture.DEFAULT_OPTIONS,
    ):
        self.name = name
        self.limits = limits
        self.abort_errors = abort_errors
        self.options = options
        self.stats = RunnerStats()
        self.table = EntryTable(name, self.stats)
        self.gate = CaptureGate(name, self.stats)
        self._fixed_backend = backend
        self._backends: dict[str, GraphBackend] = {}
        self._disabled: str | None = None
        self._capture_stopped: str | None = None
        self._warned: set[str] = set()
        #: Devices this runner has captured on (their lazy init is done; see RunnerLimits).
        self._captured_on: set[torch.device] = set()

    # ------------------------------------------------------------------ decide
    def lookup(self, args: tuple, kwargs: dict, dispatch: Dispatch = PLAIN, gate: Gate = NO_GATE) -> Decision | Pending:
        """The decision where the caller's state cannot change it, else :class:`~.dispatch.Pending`."""
        if self._disabled is not None:
            return Decision.eager(self._off())
        try:
            call = key_call(args, kwargs, dispatch)
        except (MixedDevices, UnkeyableArgument) as e:
            return Decision.eager(unkeyable(e))
        return self.verdict(call, gate) or self.pending(call, gate)

    def verdict(self, call: Call | Keyed, gate: Gate = NO_GATE) -> Decision | None:
        """The final eager decision where the key alone decides (disabled, not captured, blocked, put
        off by the gate), else None (it has an entry, or the gate let it capture): :meth:`pending`
        then takes the same ``gate``, which is weighed here only."""
        if self._disabled is not None:
            return Decision.eager(self._off())
        if call.key in self.table.entries:
            return None
        reason = self.table.refusal(call.key)
        if not gate.on_first_call or reason is not None:
            return Decision.eager(reason or not_captured(call), call)
        return Decision.eager(NOT_WORTH_IT, call) if self.gate.put_off(call, gate) else None

    def pending(self, call: Call, gate: Gate = NO_GATE) -> Pending:
        return Pending(call, gate, call.key in self.table.entries)

    def resolve(self, pending: Pending, state: Any) -> Decision:
        """Serve the entry bound to ``state``, capture under it, or eager with the reason. An entry
        bound to another state, or holding a tensor written since capture, is dropped here."""
        if self._disabled is not None:
            return Decision.eager(self._off())
        call, gate = pending.call, pending.gate
        entry = self.table.entries.get(call.key)  # the caller may have dropped entries since lookup
        dropped = STALE
        if entry is not None:
            bound = same_state(entry.state, state)
            written = entry.outside_written(state) if bound else None
            if bound and written is None:
                return Decision(Action.SERVE if entry.serves(call.variant) else Action.PROVE, call, entry)
            dropped = outside_written_reason(written) if written is not None else STALE
            self.table.drop(call.key)
            log.warning("[BCG] %s: %s: %s", self.name, call.label, dropped)
        if pending.had_entry:  # dropped: the gate weighs a new capture as for a first sight
            if not gate.on_first_call:
                return Decision.eager(dropped, call)
            if self.gate.put_off(call, gate):
                return Decision.eager(NOT_WORTH_IT, call)
        return Decision(Action.CAPTURE, call, state=state)

    # ------------------------------------------------------------------ carry out
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
        strategy: CaptureStrategy | None = None,
        binding: StateBinding = UNBOUND,
    ) -> Any:
        """lookup, resolve under ``state`` and execute, for a caller whose state is at hand."""
        kwargs = kwargs or {}
        found = self.lookup(
            args, kwargs, Dispatch(key_extra, tuple(opaque), label), Gate(capture_first_call, calls_left, runs_seen)
        )
        decision = self.resolve(found, state) if isinstance(found, Pending) else found
        return self.execute(decision, fn, args, kwargs, verify=verify, strategy=strategy, binding=binding)

    def execute(
        self,
        decision: Decision,
        fn: Callable,
        args: tuple,
        kwargs: dict,
        *,
        verify: bool = False,
        strategy: CaptureStrategy | None = None,
        binding: StateBinding = UNBOUND,
        reference: Reference | None = None,
    ) -> Any:
        """Carry out a decision for this call: replay (``verify``, and PROVE: also run eager and compare;
        a replay that differs blocks its key and eager's output answers), capture on sight and answer
        with eager's output, or run eager under the reason. ``reference``: the call as received."""
        call = decision.call
        plain = reference or Reference(fn, args, kwargs)
        if decision.action is Action.EAGER:
            self.count_eager(decision.reason)
            return plain()
        if decision.action is Action.CAPTURE:
            result = self._capture(call, fn, args, kwargs, decision.state, strategy or capture.EXACT, binding, plain)
            if result.status is CaptureStatus.CAPTURED:
                reason = Reason(reasons.FIRST_CALL, f"{FIRST_CALL}: {call.label}")
            else:
                reason = result.reason or not_captured(call)
            if result.output is None:  # the capture was skipped before anything ran
                self.count_eager(reason)
                return plain()
            self.stats.record_eager(reason)
            return result.output
        out, served = self._replay(decision.entry, call, plain, check=verify or decision.action is Action.PROVE)
        if served:
            decision.entry.stats.hits += 1
            self.stats.hits += 1
            self.table.touch(call.key)
        return out

    def _replay(self, entry, call: Call, plain: Reference, check: bool) -> tuple[Any, bool]:
        """Replay ``entry`` for ``call``: ``(replay, True)``. ``check``: also run the call plainly and
        compare; equal, the entry serves every variant from now on, else its key is blocked and
        ``(eager's output, False)`` answers. A replay that raises blocks its key and answers eagerly."""
        try:
            out = clone_tree(entry.replay(call.leaves))
        except Exception as e:
            self.count_eager(self.table.block(call, Reason(reasons.CAPTURE_FAILED, f"replay failed: {one_line(e)}")))
            return plain(), False
        if not check:
            return out, True
        truth = plain()
        exact, diff = outputs_equal(out, truth)
        what = "verify" if entry.serves(call.variant) else f"prove variant {call.variant} of"
        log.log(logging.INFO if exact else logging.WARNING, "[BCG] %s: %s %s: replay %s eager (max abs diff %g)",
                self.name, what, call.label, "==" if exact else "!=", diff)  # fmt: skip
        if not exact:
            self.stats.record_eager(self.table.block(call, reasons.not_exact(diff)))
            return truth, False
        entry.shared = entry.shared or not entry.serves(call.variant)
        return out, True

    def run_eager(self, fn: Callable, args: tuple, kwargs: dict, reason: str) -> Any:
        """Run ``fn`` eagerly, counted under ``reason`` (:meth:`count_eager`)."""
        self.count_eager(reason)
        return fn(*args, **kwargs)

    def count_eager(self, reason: str) -> None:
        """Count one eager call under ``reason`` (a debug line the first time), for any caller."""
        self.stats.record_eager(reason)
        if reason not in self._warned:
            self._warned.add(reason)
            log.debug("[BCG] %s: eager call (%s)", self.name, reason)

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
        variant: Hashable = None,
        state: Any = None,
        strategy: CaptureStrategy | None = None,
        binding: StateBinding = UNBOUND,
        reference: Reference | None = None,
    ) -> CaptureResult:
        """Capture ``fn`` for the signature of these arguments under ``state`` and prove it
        (idempotent: an entry bound to an equal state is ALREADY_CAPTURED, after a proof where this
        call is a variant it has not served; one bound to another is dropped and captured again).
        ``result.output``: the live call's eager output whenever ``fn`` ran. ``reference``: as execute's."""
        kwargs = kwargs or {}
        try:
            call = key_call(args, kwargs, Dispatch(key_extra, tuple(opaque), label, variant))
        except (MixedDevices, UnkeyableArgument) as e:
            return CaptureResult(CaptureStatus.SKIPPED, label or "?", unkeyable(e))
        plain = reference or Reference(fn, args, kwargs)
        return self._capture(call, fn, args, kwargs, state, strategy or capture.EXACT, binding, plain)

    def _capture(
        self, call: Call, fn, args, kwargs, state, strategy: CaptureStrategy, binding, plain: Reference
    ) -> CaptureResult:
        entry = self.table.entries.get(call.key)
        if entry is not None and not same_state(entry.state, state):
            log.info("[BCG] %s: %s: %s; capturing again", self.name, call.label, STALE)
            self.table.drop(call.key)
        elif entry is not None and entry.serves(call.variant):
            return CaptureResult.already(entry.stats, call.label)
        elif entry is not None:  # another variant of a captured key: proven now, or its key blocked
            output, exact = self._replay(entry, call, plain, check=True)
            if exact:
                return CaptureResult.already(entry.stats, call.label, output)
            return CaptureResult(CaptureStatus.NOT_EXACT, call.label, self.table.blocked[call.key], output=output)
        if self.limits.evict_lru:
            self.table.make_room(self.limits.max_entries, self.limits.memory_budget_bytes)
        skip = self._capture_refusal(call)
        if skip is not None:
            return CaptureResult(CaptureStatus.SKIPPED, call.label, skip)
        try:
            return self._capture_and_prove(call, fn, args, kwargs, state, strategy, binding, plain)
        except BaseException as e:
            if isinstance(e, self.abort_errors) or not isinstance(e, Exception):
                raise  # a Cancel: nothing is blocked, the next warm-up tries this shape again
            memory = isinstance(e, torch.OutOfMemoryError)  # passing: capturing stops until a warm-up
            self._capture_stopped = "out of memory during capture" if memory else self._capture_stopped
            reason = self.table.capture_failed(call, e, passing=memory)
        # Outside the except block, so the error's traceback (which holds the failed capture's
        # frames, its pool among them) is gone before the eager fallback allocates.
        if call.device is not None and call.device.type == "cuda":
            torch.cuda.empty_cache()
        return CaptureResult(CaptureStatus.FAILED, call.label, reason, output=plain())

    def _capture_and_prove(self, call: Call, fn, args, kwargs, state, strategy: CaptureStrategy, binding, plain):
        capture_fn = strategy.capture_forward(fn)
        backend = self._backend(call.device)
        first = call.device not in self._captured_on
        run_truth = capture.truth_of(fn, capture_fn, args, kwargs, plain, binding)
        truth = run_truth if first else capture.eager_truth(run_truth, call.device, backend)
        try:
            entry = capture.record(
                call, fn, capture_fn, args, kwargs,
                backend=backend, pool=self.table.pool(call.device, backend.new_pool),
                max_segments=self.limits.max_segments,
                warmup_runs=self.limits.warmup_runs if first else self.limits.warmup_runs_after_first,
                audits_reads=strategy.audits_reads, options=self.options, binding=binding,
            )  # fmt: skip
        except BaseException:
            self.table.forget_pool(call.device)
            raise
        try:
            result = capture.settle(entry, call, truth, plain, state, strategy, binding, self.table)
        finally:
            if entry.stats.proof is not None:  # a device's first capture time carries its lazy init
                self.stats.costs.record(None if first else entry.stats.capture_seconds, entry.stats.proof, call.size)
        if result.status is not CaptureStatus.CAPTURED:
            return result
        self.table.store(call.key, entry, captured=True)
        self._captured_on.add(call.device)
        return result

    def _capture_refusal(self, call: Call) -> Reason | None:
        if self._disabled is not None:
            return self._off()
        if (refused := self.table.refusal(call.key)) is not None:
            return refused
        if self._capture_stopped is not None:
            return Reason(reasons.LIMIT, f"capturing stopped: {self._capture_stopped}")
        if call.device is None or self._backend(call.device) is None:
            where = call.device.type if call.device is not None else "no tensor inputs"
            return Reason(reasons.DISABLED, f"not capturable: inputs on {where}, CUDA graphs need CUDA tensors")
        return self.table.full(self.limits.max_entries, self.limits.memory_budget_bytes)

    # ------------------------------------------------------------------ state
    @property
    def memory_bytes(self) -> int:
        """Graph pools plus static input and bridge buffers: what the graphs keep resident."""
        return self.table.memory_bytes

    @property
    def disabled_reason(self) -> str | None:
        return self._disabled

    def _off(self) -> Reason:
        return Reason(reasons.DISABLED, f"disabled: {self._disabled}")

    def disable(self, reason: str) -> None:
        """Every call runs eager with ``disabled: reason``; captures are refused. Entries are kept."""
        self._disabled = reason

    def enable(self) -> None:
        self._disabled = None

    def set_memory_budget(self, budget_bytes: int | None) -> None:
        """Change the graph memory budget (None: no limit); applies to the next capture."""
        self.limits = replace(self.limits, memory_budget_bytes=budget_bytes)

    def begin_warmup(self) -> None:
        """A warm-up starts: shapes that failed for a passing reason (out of memory) may try again."""
        self.table.retry.clear()
        self._capture_stopped = None

    def drop_unbound(self, state: Any) -> int:
        """Drop every entry bound to another ``state`` (their memory goes back to the pool); returns
        how many. Resolve drops such entries on sight anyway; this frees them as soon as the caller
        knows the state changed."""
        return self.table.drop_unbound(state)

    def entries(self) -> list[EntryStats]:
        return [e.stats for e in self.table.entries.values()]

    def blocked(self) -> dict[str, str]:
        """Blocked signatures (described) and why."""
        return self.table.described_blocks()

    def reset(self) -> None:
        """Drop every entry, block and stop; the next capture starts a fresh pool. Pool memory
        returns to the caching allocator once all graphs drawing on it are gone."""
        self.table.clear()
        self._capture_stopped = None

    def _backend(self, device: torch.device) -> GraphBackend | None:
        if self._fixed_backend is not None:
            return self._fixed_backend if self._fixed_backend.device_type == device.type else None
        if device.type not in self._backends and (backend := backend_for(device)) is not None:
            self._backends[device.type] = backend
        return self._backends.get(device.type)
