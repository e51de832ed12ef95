"""Why a call did not replay, as a value: a kind (what the UI keys on) and the text a user reads.

One value travels from the place that decided to every place that shows it: the run summary in
the log, the badge and the details dialog in the browser, ``/bcg/status`` and the warm-up report.
They all print :func:`str` of it, and the browser reads :attr:`Reason.kind` (sent beside the text
as ``eager_kinds`` in a run's report and in a session's, ``blocked_kinds`` in a session's
status), never a pattern over the text.

``Reason`` is a ``str`` whose value is the text, so counters keyed by reason, JSON and log lines
keep working unchanged, and two reasons with one text are one counter entry.
"""

from __future__ import annotations

import enum


class Kind(enum.Enum):
    """The closed set of reason kinds (the browser's badge colours and short texts key on the values)."""

    DISABLED = "disabled"  # BCG cannot serve this model or run (no CUDA, unsupported, lowvram, ...)
    NOT_CAPTURED = "not_captured"  # no graph for this shape (warm-up only)
    FIRST_CALL = "first_call"  # this call captured its shape and returned the eager output
    NOT_WORTH_IT = "not_worth_it"  # a capture would not repay itself yet
    STALE = "stale"  # a graph existed but what it reads changed: dropped
    UNCLASSIFIED = "unclassified"  # the model carries something BCG cannot classify: eager, never a guess
    OPTIONS = "options"  # the call's transformer_options hold what a graph cannot serve
    CAPTURE_FAILED = "capture_failed"  # capture or proof raised (out of memory, an op that cannot be captured)
    NOT_EXACT = "not_exact"  # the proof replay differed from eager: never served
    OUTSIDE_RUN = "outside_run"  # a DiT call outside a sampling run
    WRAPPER = "wrapper"  # another DIFFUSION_MODEL wrapper runs inside BCG's
    LIMIT = "limit"  # entry, segment or memory limit
    THREAD = "thread"  # another thread or device than the run's (multi-GPU split)
    COMPILED = "compiled"  # a torch.compile'd forward served the call
    CORE_GRAPH = "core_graph"  # ComfyUI (or another node) already runs this forward or a module of it as a CUDA graph


class Reason(str):
    """A reason text with its :attr:`kind` (a :class:`Kind`; a kind's value is accepted too)."""

    __slots__ = ("kind",)

    def __new__(cls, kind: Kind | str, text: str) -> "Reason":
        self = super().__new__(cls, text)
        self.kind = kind if isinstance(kind, Kind) else Kind(kind)
        return self

    def __reduce__(self):
        return (Reason, (self.kind, str(self)))


def kind_of(reason: str) -> str:
    """The kind of a reason as its value (what JSON and the browser carry); ``"other"`` for a plain string."""
    kind = getattr(reason, "kind", None)
    return kind.value if isinstance(kind, Kind) else "other"


def headline(reason: str) -> str:
    """The first few words of a reason, for a badge or a log line: the text before its first
    ``": "``, ``"; "`` or ``" ("``, less a leading ``"disabled: "`` (``"no CUDA: ComfyUI runs with
    --cpu; ..."`` -> ``"no CUDA"``). Reasons are written head first for this."""
    text = str(reason)
    if text.startswith("disabled: "):
        text = text[len("disabled: ") :]
    cuts = [i for i in (text.find(": "), text.find("; "), text.find(" (")) if i > 0]
    return text[: min(cuts)] if cuts else text


# The kinds by name, for ``Reason(reasons.DISABLED, ...)``.
DISABLED, NOT_CAPTURED, FIRST_CALL, NOT_WORTH_IT, STALE = (
    Kind.DISABLED, Kind.NOT_CAPTURED, Kind.FIRST_CALL, Kind.NOT_WORTH_IT, Kind.STALE,
)  # fmt: skip
UNCLASSIFIED, OPTIONS, CAPTURE_FAILED, NOT_EXACT, OUTSIDE_RUN = (
    Kind.UNCLASSIFIED, Kind.OPTIONS, Kind.CAPTURE_FAILED, Kind.NOT_EXACT, Kind.OUTSIDE_RUN,
)  # fmt: skip
WRAPPER, LIMIT, THREAD, COMPILED, CORE_GRAPH = (Kind.WRAPPER, Kind.LIMIT, Kind.THREAD, Kind.COMPILED, Kind.CORE_GRAPH)


def one_line(e: BaseException) -> str:
    """``'TypeName: first line of the message'`` (at most 300 characters): an error as a reason a
    user reads in a report or a counter."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


def not_exact(diff: float) -> Reason:
    """Why a graph whose replay differed from eager never serves."""
    return Reason(NOT_EXACT, f"replay not exact (max abs diff {diff:g})")
