"""Which call is which and what the runner does with it, as values: the call's key, the runner's
decision, and the capture gate that weighs a first-sight capture against the calls still to come.

A call's key is the structure of its arguments (containers, constants, and shape, stride, dtype
and device of every tensor), the names of its opaque arguments, and the caller's ``key_extra``:
anything else the caller knows changes the computation. Opaque arguments are passed to the
callable as they are and are not part of the key: the caller vouches that ``key_extra`` describes
whatever in them matters. Any other object in the arguments makes the call unkeyable.
"""

from __future__ import annotations

import enum
import logging
from typing import Any, Callable, Hashable, NamedTuple

import torch

from . import reasons
from .reasons import Reason
from .stats import RunnerStats, size_class
from .trees import MixedDevices, TensorSpec, flatten_inputs

log = logging.getLogger(__name__)

NOT_CAPTURED = "not captured"
#: Reason prefix of the call that captured its signature on first sight (it returns the eager output).
FIRST_CALL = "first call, captured"
#: Reason of a first-sight call left eager because the calls left would not repay a capture.
NOT_WORTH_IT = Reason(
    reasons.NOT_WORTH_IT,
    "not captured yet: the calls left would not repay a capture (captured once the shape recurs enough to repay one)",
)
#: Reason of an eager call whose entry was dropped because its ``state`` no longer matches.
STALE = Reason(reasons.STALE, "graph dropped: what it reads changed since capture (the model's fingerprint differs)")
#: Signatures whose capture was put off are remembered up to this many (oldest forgotten first).
MAX_DEFERRED = 4096


class CallKey(NamedTuple):
    structure: Hashable
    opaque: tuple[str, ...]
    extra: Hashable


class Dispatch(NamedTuple):
    """What the caller knows about a call besides its arguments: ``key_extra`` (key material the
    arguments do not show), ``opaque`` (arguments passed through unkeyed), ``label`` (its name
    in logs and reports; default: the tensors' shapes) and ``variant``.

    ``variant``: which of the calls one key covers this one is, where the caller rewrote the call
    so that several share a key (a caption the model pads itself, keyed by its padded length, with
    the real length as the variant); None where a key covers one kind of call. An entry serves a
    variant other than the one it was captured for only after one replay of another variant
    equalled the caller's reference (:attr:`Action.PROVE`)."""

    key_extra: Hashable = ()
    opaque: tuple[str, ...] = ()
    label: str | None = None
    variant: Hashable = None


class Reference(NamedTuple):
    """The call as its caller received it, where the runner is handed a rewritten form (``fn`` is
    the rest of a forward whose own prologue ran before the key): every eager answer and every
    proof's truth is this call run plainly."""

    fn: Callable
    args: tuple
    kwargs: dict

    def __call__(self, watch: Callable[[dict], dict] = lambda kwargs: kwargs) -> Any:
        return self.fn(*self.args, **watch(self.kwargs))


class Gate(NamedTuple):
    """What the capture gate weighs for a call with no entry: capture it on sight
    (``on_first_call``), and the calls of its signature still to come (:class:`CaptureGate`)."""

    on_first_call: bool = False
    calls_left: int | None = None
    runs_seen: int | None = None


#: A call the caller knows nothing more about, and one that is never captured on sight.
PLAIN = Dispatch()
NO_GATE = Gate()


class Call(NamedTuple):
    """A keyed call: its key, its tensor leaves in key order, its label and its one device.

    Call, :class:`Decision` and :class:`Pending` are made for every DiT call: named tuples, whose
    construction costs the hot path a fraction of a frozen dataclass's."""

    key: CallKey
    leaves: list[torch.Tensor]
    label: str
    device: torch.device | None
    variant: Hashable = None

    @property
    def size(self) -> int:
        """The :func:`~.stats.size_class` of the first tensor (a DiT call's latent)."""
        return size_class(self.leaves[0] if self.leaves else None)

    def keyed(self) -> "Keyed":
        return Keyed(self.key, self.label, self.size)


class Keyed(NamedTuple):
    """What the runner decides a call by where its tensors are not needed: its key, label and
    size class. A caller that met a call of the same signature before hands this to
    ``GraphRunner.verdict`` instead of keying the call again (a :class:`Call` has the same three)."""

    key: CallKey
    label: str
    size: int


class Action(enum.Enum):
    """What the runner does with a call."""

    SERVE = "serve"  # its proven entry replays
    #: its entry replays and is compared with the reference; equal: it serves every variant from
    #: now on, else its key is blocked and the reference's output answers
    PROVE = "prove"
    CAPTURE = "capture"  # capture and prove now, answer with eager
    EAGER = "eager"  # run eager, with the reason


class Decision(NamedTuple):
    """The runner's final word on one call: :attr:`Action.SERVE` (``entry`` replays),
    :attr:`Action.PROVE` (``entry`` replays for a variant it has not served yet), :attr:`Action.CAPTURE` (capture under ``state`` and prove now, answer with eager) or
    :attr:`Action.EAGER` (``reason``)."""

    action: Action
    #: The call; an eager decision made on the key alone (``GraphRunner.verdict``) holds its Keyed.
    call: Call | Keyed | None = None
    entry: Any = None
    reason: Reason | None = None
    state: Any = None

    @classmethod
    def eager(cls, reason: Reason, call: Call | Keyed | None = None) -> "Decision":
        return cls(Action.EAGER, call, reason=reason)


class Pending(NamedTuple):
    """A call whose fate depends on the caller's ``state`` (it has an entry to check, or is to be
    captured): the caller takes the state and hands both to ``GraphRunner.resolve``."""

    call: Call
    gate: Gate
    #: Whether the call had an entry at lookup (one the state may no longer serve).
    had_entry: bool


def key_call(args: tuple, kwargs: dict, dispatch: Dispatch) -> Call:
    """The :class:`Call` of these arguments; raises :class:`~.trees.UnkeyableArgument` for an
    object the key cannot hold and :class:`~.trees.MixedDevices` for tensors on several devices
    (a 0-dim CPU tensor passed to a CUDA kernel is read as a host scalar and frozen into a graph)."""
    opaque = tuple(sorted(dispatch.opaque))
    keyed_kwargs = {k: v for k, v in kwargs.items() if k not in opaque}
    leaves, structure = flatten_inputs((tuple(args), keyed_kwargs))
    devices = {t.device for t in leaves}
    if len(devices) > 1:
        raise MixedDevices(devices)
    label = dispatch.label or " ".join(TensorSpec.of(t).describe() for t in leaves) or "no tensors"
    device = leaves[0].device if leaves else None
    return Call(CallKey(structure, opaque, dispatch.key_extra), leaves, label, device, dispatch.variant)


def describe_key(key: CallKey) -> str:
    """The tensors of a key and its extra, for a report."""
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


class CaptureGate:
    """Whether a first-sight capture should wait: yes while the calls it can expect cannot repay
    it by the measured costs (``stats.costs``).

    Expected calls: the calls left in this run times the runs the signature was seen in (a new run
    is told by ``calls_left`` growing: a run counts down), on the reasoning that a shape seen in n
    runs comes back about as often again. So a batch of all-distinct shapes stays eager, and a
    shape that recurs is captured once it repays. ``runs_seen`` given: the caller counted the runs
    (``calls_left`` is then one run's calls; counting them again here would make the expectation
    grow with the square of the runs)."""

    def __init__(self, name: str, stats: RunnerStats):
        self.name = name
        self.stats = stats
        #: Signatures put off: (calls left when last seen, runs seen in).
        self.deferred: dict[CallKey, tuple[int, int]] = {}

    def put_off(self, call: Call | Keyed, gate: Gate) -> bool:
        if gate.calls_left is None:
            return False
        before, runs = self.deferred.get(call.key, (None, 1))
        if gate.runs_seen is not None:
            runs = gate.runs_seen
        elif before is not None and gate.calls_left > before:
            runs += 1
        expected = gate.calls_left * runs
        costs = self.stats.costs
        if costs.repays(expected, call.size):
            self.deferred.pop(call.key, None)
            return False
        if before is None:
            log.info("[BCG] %s: %s: first call left eager: %d calls to come would save about %.0f ms, a capture costs %.0f ms",
                     self.name, call.label, expected, 1000 * expected * (costs.saving_of(call.size) or 0.0), 1000 * costs.overhead_s)  # fmt: skip
            if len(self.deferred) >= MAX_DEFERRED:
                del self.deferred[next(iter(self.deferred))]
        self.deferred[call.key] = (gate.calls_left, runs)
        return True


def not_captured(call: Call | Keyed) -> Reason:
    return Reason(reasons.NOT_CAPTURED, f"{NOT_CAPTURED}: {call.label}")


def unkeyable(e: Exception) -> Reason:
    """The reason a call that :func:`key_call` refused runs eager under."""
    if isinstance(e, MixedDevices):
        return Reason(reasons.LIMIT, str(e))
    return Reason(reasons.OPTIONS, f"unkeyable argument {e.path}")
