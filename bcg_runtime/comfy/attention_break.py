"""The attention break: BCG's ``transformer_options["optimized_attention_override"]``, under which
attention runs eagerly between graph segments (mode breakable, and around any override BCG does
not own).

A replayed break must see the *live* call's ``transformer_options`` (a sigma-dependent override
reads this step's ``sigmas``), plus the entries the DiT wrote into them on its way to this block
(``block_index``, ...), which a replay does not write, since the DiT's Python does not run. So
under capture the break records only those written entries (the difference from the options the
DiT was called with, :data:`CALL_OPTIONS`, set by the DIFFUSION_MODEL hook around each call), and
every run of it, at capture and at each replay, passes the live call's options with them laid over.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from ..core.breaks import graph_break, is_capturing
from .options import WatchedOptions

#: The live call's ``transformer_options`` as they were when the DiT was called (before the
#: forward wrote its block entries into them): the attention break reads them at every replay.
CALL_OPTIONS: ContextVar[dict | None] = ContextVar("bcg_call_options", default=None)

#: The keyword under which :class:`BreakingAttention` passes the options the DiT wrote to its break.
_WRITTEN = "bcg_written_options"


class BreakingAttention:
    """The attention break site; chains the override that was there before (``previous``)."""

    def __init__(self, previous: Any = None):
        self.previous = previous

    def __call__(self, func, *args, **kwargs):
        if self.previous is not None:
            args = (func, *args)
            func = self.previous
        options = kwargs.get("transformer_options")
        if is_capturing() and isinstance(options, dict):
            entry = CALL_OPTIONS.get() or {}
            written = {k: v for k, v in options.items() if k not in entry or entry[k] is not v}
            del kwargs["transformer_options"]
            # ``written`` travels as an argument: each replay passes it as captured (its tensors are
            # the graph's reads), while the live options are fetched anew (the live call's reads).
            return graph_break(_WithLiveOptions(func), *args, **kwargs, **{_WRITTEN: written})
        if isinstance(options, WatchedOptions):
            # The proof's eager run: a break reads the live call's options at every replay, so its
            # reads (a sigma-dependent override's ``sigmas``) are not the graph's; unwatched, as a
            # replay hands them (a plain dict).
            kwargs["transformer_options"] = dict(options)
        return graph_break(func, *args, **kwargs)

    def __deepcopy__(self, memo):
        return self


class _WithLiveOptions:
    """``func`` called with the live call's ``transformer_options`` and the entries the DiT wrote
    (keyword :data:`_WRITTEN`) laid over them."""

    def __init__(self, func):
        self.func = func
        self.__qualname__ = getattr(func, "__qualname__", type(func).__qualname__)

    def __call__(self, *args, **kwargs):
        options = dict(CALL_OPTIONS.get() or {})
        options.update(kwargs.pop(_WRITTEN))
        return self.func(*args, transformer_options=options, **kwargs)
