"""The break-point API, used from inside code that may be under capture.

Outside a capture a break is a plain call, so one model code path serves eager runs, warm-up and
capture alike. Inside :meth:`BreakableGraph.capture` a break ends the current graph segment, runs
the function eagerly, records how to re-run it at replay, and starts the next segment.

Contract for a break function (what makes replay correct):

* it takes every tensor it reads as an argument and returns every tensor it produces; it does not
  publish tensors elsewhere (on ``self``, in a global cache), since those would not be refreshed;
* it returns the same structure (shapes, dtypes, constants) on every replay of one capture;
* it runs on the current stream, or joins any stream it forks before returning.

Example::

    from bcg_runtime.core.breaks import graph_break

    def attention(q, k, v):
        return graph_break(sdpa_over_real_tokens, q, k, v)
"""

from __future__ import annotations

import functools
from contextvars import ContextVar
from typing import Any, Callable, Protocol, TypeVar


class _BreakSink(Protocol):
    def run_break(self, fn: Callable, args: tuple, kwargs: dict) -> Any: ...


_ACTIVE_CAPTURE: ContextVar[_BreakSink | None] = ContextVar("bcg_active_capture", default=None)

F = TypeVar("F", bound=Callable[..., Any])


def graph_break(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """Call ``fn(*args, **kwargs)``; under capture, as an eager break between two segments."""
    sink = _ACTIVE_CAPTURE.get()
    if sink is None:
        return fn(*args, **kwargs)
    return sink.run_break(fn, args, kwargs)


def breakable(fn: F) -> F:
    """Decorator form of :func:`graph_break`: every call of ``fn`` is a break point."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return graph_break(fn, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def is_capturing() -> bool:
    """True while a breakable capture is running in this context (thread / task)."""
    return _ACTIVE_CAPTURE.get() is not None


def _activate(sink: _BreakSink | None):
    """Install ``sink`` as the active capture; returns the token for :func:`_deactivate`."""
    return _ACTIVE_CAPTURE.set(sink)


def _deactivate(token) -> None:
    _ACTIVE_CAPTURE.reset(token)
