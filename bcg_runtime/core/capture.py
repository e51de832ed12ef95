"""Capture one call into a breakable graph, and the proof that its replay is the eager call.

How a mode captures and accepts is its :class:`CaptureStrategy`; what the runner's captures do
for every mode is its :class:`CaptureOptions`; what the caller binds by address and watches is its
:class:`StateBinding`, handed down with each capture (the runner holds no callbacks).

* The capture runs on shifted copies of the floating-point inputs (:func:`shift_floats`), so
  anything the graph froze instead of computing at replay (a value read on the host, work on a
  stream the capture did not see, a tensor computed once and cached) shows in the proof as a
  difference, not later as a wrong image.
* The proof runs the call eagerly on the live arguments (before the capture, except a device's
  first, which follows its warm-up runs: that run does the shape's lazy work, so a later capture
  runs no warm-up of its own), replays them, and holds the entry only if the outputs are equal.
* What the capture read outside its inputs, its own memory and the binding's storages is held by
  the entry with how a write into it shows (:class:`~.outside_reads.HeldTensor`); a tensor read
  from an opaque argument the key does not hold fails the capture (:class:`UnkeyedOpaqueRead`).
"""

from __future__ import annotations

import contextlib
import enum
import functools
import gc
import time
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Protocol

import torch

from . import reasons
from .backends import GraphBackend
from .dispatch import Call, Reference
from .entries import Entry, EntryTable
from .graph import BreakableGraph
from .host_copies import HostCopyStaging
from .host_reads import HostReads
from .outside_reads import HeldTensor, OutsideReads, storage_key, storage_keys
from .reasons import Reason, one_line
from .stats import CapturePhases, EntryStats, ProofTimes
from .trees import make_static_buffer, outputs_equal, tensor_bytes, unflatten_inputs


@dataclass(frozen=True)
class CaptureStrategy:
    """How a mode captures and accepts a graph, given to the runner per call.

    ``capture_forward(fn)``: the callable the capture runs (its warm-up runs, the capture itself and
    the proof's eager run); the proof holds the replay bit-equal to it. ``accept(captured, fn)``:
    for a mode whose captured forward differs from ``fn`` by design (fast: compiled kernels), the
    owner's own judgement of the proven output against ``fn`` run plainly on the live call; None
    or the reason to refuse. The exact modes use :data:`EXACT`: capture ``fn`` itself, no ``accept``."""

    capture_forward: Callable[[Callable], Callable] = staticmethod(lambda fn: fn)
    accept: Callable[[Any, Any], "str | None"] | None = None
    #: Record what the capture reads outside its inputs (the entry's held tensors). Off only where
    #: the capture runs kernels the dispatcher does not see (compiled code).
    audits_reads: bool = True


EXACT = CaptureStrategy()


@dataclass(frozen=True)
class CaptureOptions:
    """What every capture of a runner does, from the model's adapter."""

    #: The callable copies constant host tensors to the device, which capture refuses: stage them
    #: through pinned buffers the entry holds (:mod:`.host_copies` says when that is exact).
    stage_host_copies: bool = False
    #: The callable reads device values on the host, each determined by the call's key (the
    #: caller's contract): captures hand it the live call's values (:mod:`.host_reads`).
    replay_host_reads: bool = False
    #: Opaque arguments whose tensors ``key_extra`` describes by value (a capture may read them).
    opaque_keyed: frozenset[str] = frozenset()


DEFAULT_OPTIONS = CaptureOptions()


class StateBinding(Protocol):
    """The caller's side of a capture (a sampling run implements it)."""

    def bound_storages(self) -> set[int]:
        """The storages (:func:`~.outside_reads.storage_keys`) the caller's ``state`` binds by
        address (the model's weights); the capture's other outside reads are held and guarded."""

    def after_capture(self, state: Any) -> Any:
        """The state to bind a proven entry to, given the one it was captured under (a process
        setting torch settles at the forward's first use may have changed during the capture)."""

    def watch(self, kwargs: dict) -> dict:
        """The keyword arguments the capture's plain run of the live call takes: a view that raises
        :class:`UnkeyedOpaqueRead` where the forward's Python reads what the key does not hold."""


class Unbound:
    """The binding of a caller that binds nothing beyond the inputs and watches nothing."""

    def bound_storages(self) -> set[int]:
        return set()

    def after_capture(self, state: Any) -> Any:
        return state

    def watch(self, kwargs: dict) -> dict:
        return kwargs


UNBOUND = Unbound()


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

    @classmethod
    def already(cls, entry: EntryStats, label: str, output: Any = None) -> "CaptureResult":
        """A capture asked for a key whose entry serves the call already."""
        return cls(CaptureStatus.ALREADY_CAPTURED, label, entry=entry, output=output, exact=True, max_abs_diff=0.0)


class UnkeyedOpaqueRead(RuntimeError):
    """A capture read something of an opaque argument that the call's key does not describe: a
    tensor (seen by the outside-reads audit), or an entry the binding's ``watch`` view watches."""


#: Capture-time inputs are the live floating-point inputs times this (plus a small offset), so that
#: the proof replay, on the live values, differs from the capture's values everywhere.
CAPTURE_SHIFT = 1.0625

#: The dtypes :func:`shift_floats` shifts (float8 and other storage-only types have no arithmetic).
_SHIFTED_DTYPES = frozenset(
    {torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128}
)


def shift_floats(tensors: list[torch.Tensor]) -> None:
    """Shift floating-point tensors in place (``t * 1.0625 + 1/32``); integer and bool tensors,
    which may steer indexing and masks, keep their values."""
    for t in tensors:
        if t.dtype in _SHIFTED_DTYPES:
            t.mul_(CAPTURE_SHIFT).add_(1 / 32)


def record(
    call: Call,
    fn: Callable,
    capture_fn: Callable,
    args: tuple,
    kwargs: dict,
    *,
    backend: GraphBackend,
    pool: Any,
    max_segments: int,
    warmup_runs: int,
    audits_reads: bool,
    options: CaptureOptions,
    binding: StateBinding,
) -> Entry:
    """Capture ``capture_fn`` on static, shifted copies of the call's tensors into a new graph in
    ``pool`` (after ``warmup_runs`` eager runs on the capture stream) and return the unproven
    entry. On an error the graph is reset before it propagates."""
    device = call.device
    audit = OutsideReads(device.type) if audits_reads else None
    graph = BreakableGraph(backend, pool, device, max_segments, break_scope=audit.breaking if audit else None)
    static_leaves = [make_static_buffer(t) for t in call.leaves]
    shift_floats(static_leaves)
    keyed = {k: v for k, v in kwargs.items() if k not in call.key.opaque}
    s_args, s_kwargs = unflatten_inputs((tuple(args), keyed), static_leaves)
    s_kwargs.update((k, kwargs[k]) for k in call.key.opaque if k in kwargs)  # passed as they are
    staging = HostCopyStaging(device.type) if options.stage_host_copies and device.type != "cpu" else None
    reads = HostReads(device.type) if options.replay_host_reads else None
    nothing = contextlib.nullcontext
    start = time.perf_counter()
    try:
        with _collector_paused():
            if reads:  # the live call's values: what every call of this key reads
                with reads.recording():
                    fn(*args, **kwargs)
            runs = max(warmup_runs, 1) if staging else warmup_runs  # staging records its buffers in the last one
            with backend.capture_stream(device):
                for run in range(runs):
                    with reads.replaying() if reads else nothing():
                        with staging.recording() if staging and run == runs - 1 else nothing():
                            capture_fn(*s_args, **s_kwargs)
            backend.synchronize(device)
            warmed = time.perf_counter()
            with reads.replaying() if reads else nothing(), staging.replaying() if staging else nothing():
                with audit or nothing():
                    output = graph.capture(capture_fn, s_args, s_kwargs)
            backend.synchronize(device)
            recorded = time.perf_counter()
            outside = _held(audit, static_leaves, s_kwargs, call.key.opaque, options, binding)
    except BaseException:
        graph.reset()
        raise
    # Device bytes (host buffers are pinned host memory); the held tensors' bit copies are the entry's own.
    static_bytes = (
        tensor_bytes(static_leaves) + graph.bridge_bytes + tensor_bytes([h.bits for h in outside if h.bits is not None])
    )
    end = time.perf_counter()
    stats = EntryStats(
        label=call.label,
        segments=graph.num_segments,
        breaks=graph.num_breaks,
        capture_seconds=end - start,
        pool_bytes_after=0,
        static_bytes=static_bytes,
        phases=CapturePhases(warmed - start, recorded - warmed, end - recorded),
    )
    return Entry(graph, static_leaves, output, stats, None, staging.buffers if staging else [], outside)


class Truth(NamedTuple):
    """The live call's eager output, the proof's truth (module docstring), and its seconds from a
    synchronised device: until the device finished (``eager``) and the call returned (``host``)."""

    output: Any
    eager: float
    host: float


def truth_of(
    fn: Callable, capture_fn: Callable, args: tuple, kwargs: dict, plain: Reference, binding: StateBinding
) -> Callable[[], Any]:
    """What the proof holds a replay to: ``plain`` with its options watched where the capture
    runs ``fn`` itself, else the strategy's own forward on ``args`` and ``kwargs`` (the strategy's
    ``accept`` then judges it against ``plain``)."""
    if capture_fn is fn:
        return functools.partial(plain, binding.watch)
    return functools.partial(capture_fn, *args, **kwargs)


def eager_truth(run: Callable[[], Any], device: torch.device, backend: GraphBackend) -> Truth:
    """Run :func:`truth_of`'s callable on the live call, timed (:class:`Truth`)."""
    backend.synchronize(device)
    start = time.perf_counter()
    output = run()
    host_s = time.perf_counter() - start
    backend.synchronize(device)
    return Truth(output, time.perf_counter() - start, host_s)


def prove(entry: Entry, call: Call, truth: Truth, table: EntryTable) -> CaptureResult:
    """A replay of the live call's inputs against its eager output (``truth``, module docstring):
    CAPTURED with eager's output, or the key blocked in ``table`` with why. The truth's times
    and the replay's go into ``entry.stats.proof`` once the replay ran."""
    sync = entry.graph.backend.synchronize
    eager_s, host_s, truth = truth.eager, truth.host, truth.output
    sync(call.device)
    start = time.perf_counter()
    try:
        replayed = entry.replay(call.leaves)
        sync(call.device)
        replay_s = time.perf_counter() - start
        exact, diff = outputs_equal(replayed, truth)
    except Exception as e:
        reason = table.block(call, Reason(reasons.CAPTURE_FAILED, f"replay failed: {one_line(e)}"))
        return CaptureResult(CaptureStatus.FAILED, call.label, reason, output=truth)
    entry.stats.proof = ProofTimes(eager_s, host_s, replay_s)
    if not exact:
        reason = table.block(call, reasons.not_exact(diff))
        return CaptureResult(CaptureStatus.NOT_EXACT, call.label, reason, output=truth, exact=False, max_abs_diff=diff)
    return CaptureResult(
        CaptureStatus.CAPTURED, call.label, entry=entry.stats, output=truth, exact=True, max_abs_diff=0.0
    )


def settle(
    entry: Entry,
    call: Call,
    truth: Truth | Callable[[], Any],
    plain: Reference,
    state: Any,
    strategy: CaptureStrategy,
    binding: StateBinding,
    table: EntryTable,
) -> CaptureResult:
    """Prove a recorded entry against ``truth`` (:func:`prove`; made now where it is
    :func:`truth_of`'s callable) and let the strategy ``accept`` it: CAPTURED with the entry bound
    to the binding's state after capture and to the call's variant, else the graph reset and the
    pools no stored entry uses released. An error does the same before it propagates."""
    try:
        truth = truth if isinstance(truth, Truth) else eager_truth(truth, call.device, entry.graph.backend)
        result = prove(entry, call, truth, table)
        if result.status is CaptureStatus.CAPTURED and strategy.accept is not None:
            result = accept(call, result, strategy.accept, plain.fn, plain.args, binding.watch(plain.kwargs), table)
        if result.status is CaptureStatus.CAPTURED:
            entry.state = binding.after_capture(state)
            entry.variant = call.variant
            return result
    except BaseException:
        entry.graph.reset()  # out of memory or a Cancel in the proof, or the binding raising
        table.release_unused_pools()
        raise
    entry.graph.reset()  # never stored: nothing unproven can serve
    table.release_unused_pools()
    return result


def accept(
    call: Call, result: CaptureResult, judge: Callable, fn: Callable, args: tuple, kwargs: dict, table: EntryTable
) -> CaptureResult:
    """A strategy's ``accept`` on a proven entry, against ``fn`` run plainly on the live call;
    a refusal blocks the key in ``table``."""
    plain = fn(*args, **kwargs)
    try:
        refusal = judge(result.output, plain)
    except Exception as e:  # a check that cannot judge this output does not let it serve
        refusal = f"check failed: {one_line(e)}"
    if refusal is None:
        return result
    reason = table.block(call, Reason(reasons.NOT_EXACT, refusal))
    return CaptureResult(CaptureStatus.FAILED, call.label, reason, output=plain)


def _held(
    audit: OutsideReads | None,
    static_leaves: list,
    s_kwargs: dict,
    opaque: tuple[str, ...],
    options: CaptureOptions,
    binding: StateBinding,
) -> list[HeldTensor]:
    """The capture's outside reads past its static inputs and the binding's storages, each held
    with how a write into it shows. Raises :class:`UnkeyedOpaqueRead` for a tensor read from an
    opaque argument outside ``opaque_keyed``."""
    if audit is None:
        return []
    outside = audit.outside(storage_keys(static_leaves) | binding.bound_storages())
    unkeyed = {
        key: path
        for name in opaque
        if name in s_kwargs and name not in options.opaque_keyed
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


@contextlib.contextmanager
def _collector_paused():
    """Keep Python's cyclic collector off until the capture is over.

    A ``torch.cuda.MemPool`` (or graph) in a reference cycle, e.g. held by the traceback of an
    earlier failed or cancelled capture, is destroyed whenever the collector runs; if that is
    during a capture its destructor asserts that no capture is underway and the process aborts
    (``MemPool::~MemPool`` -> ``synchronize_and_free_events``). Unlike ``torch.cuda.graph`` this
    does not collect first: a full collection in a ComfyUI process can take most of a capture's time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
