"""BreakableGraph: one call captured as graph segments with eager breaks between them.

Capture (:meth:`BreakableGraph.capture`) runs the callable once on the backend's capture stream.
It opens segment 0; each :func:`~bcg_runtime.core.breaks.graph_break` reached by the callable
closes the open segment, runs the break eagerly, records a :class:`BreakRecord` and opens the next
segment. Replay (:meth:`BreakableGraph.replay`) walks the same schedule on the caller's stream:
segment, break, segment, ...

Lifetime rule, the one SGLang's diffusion BCG broke (weak references, then a segfault): every
tensor that crosses a break is held *strongly* by its :class:`BreakRecord` for the graph's life.
Break inputs were produced by an earlier segment at addresses baked into it; break outputs
("bridge buffers") were allocated eagerly, outside the pool, and their addresses are baked into
the next segment. If either were freed, the allocator could hand the memory to another capture
sharing the pool, or to anyone, and replay would read or write someone else's data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from . import breaks
from .backends import GraphBackend
from .trees import copy_tree_into, tensor_bytes


class SegmentLimitExceeded(RuntimeError):
    """A capture produced more segments than the runner allows."""


@dataclass
class BreakRecord:
    """An eager region between two segments, with strong references to what crosses it."""

    fn: Callable
    args: tuple
    kwargs: dict
    output: Any  # the bridge buffers: their addresses are baked into the next segment

    def replay(self) -> None:
        copy_tree_into(self.output, self.fn(*self.args, **self.kwargs), path=_name(self.fn))


def _name(fn: Callable) -> str:
    return getattr(fn, "__qualname__", None) or type(fn).__name__


@dataclass
class BreakableGraph:
    """An ordered schedule of captured segments and eager breaks for one call signature.

    All segments draw on ``pool``, which the owning runner shares across every signature it
    captures, so intermediates are reused across segments and shapes.
    """

    backend: GraphBackend
    pool: Any
    device: torch.device
    max_segments: int = 512
    _steps: list[Callable[[], None]] = field(default_factory=list, repr=False)
    _graphs: list[Any] = field(default_factory=list, repr=False)
    _breaks: list[BreakRecord] = field(default_factory=list, repr=False)
    _open: Any = field(default=None, repr=False)
    _segments_opened: int = 0

    @property
    def num_segments(self) -> int:
        return len(self._graphs)

    @property
    def num_breaks(self) -> int:
        return len(self._breaks)

    @property
    def bridge_bytes(self) -> int:
        return sum(tensor_bytes(b.output) for b in self._breaks)

    def capture(self, fn: Callable, args: tuple = (), kwargs: dict | None = None) -> Any:
        """Run ``fn(*args, **kwargs)`` under capture and return its (pool-resident) output.

        The caller must already be on the right device, with inputs in static buffers, and should
        have run ``fn`` eagerly before (lazy initialisation must not happen under capture). On any
        error the partial capture is discarded and the error propagates.
        """
        if self._graphs or self._breaks:
            raise RuntimeError("BreakableGraph.capture: this graph already holds a capture; reset() it first")
        kwargs = kwargs or {}
        with self.backend.capture_stream(self.device):
            token = breaks._activate(self)
            try:
                self._begin_segment()
                output = fn(*args, **kwargs)
                self._end_segment()
            except BaseException:
                self._abort()
                raise
            finally:
                breaks._deactivate(token)
        return output

    def run_break(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        """Called by :func:`graph_break` during capture; see the module docstring."""
        self._end_segment()
        output = fn(*args, **kwargs)
        record = BreakRecord(fn, args, kwargs, output)
        self._breaks.append(record)
        self._steps.append(record.replay)
        self._begin_segment()
        return output

    def replay(self) -> None:
        """Re-run the schedule on the current stream. Inputs must already be in the static buffers."""
        for step in self._steps:
            step()

    def reset(self) -> None:
        """Drop every segment and bridge buffer (their memory returns to the pool / allocator)."""
        self._abort()
        for graph in self._graphs:
            graph.reset()
        self._graphs.clear()
        self._breaks.clear()
        self._steps.clear()
        self._segments_opened = 0

    def _begin_segment(self) -> None:
        if self._segments_opened >= self.max_segments:
            raise SegmentLimitExceeded(
                f"capture needs more than {self.max_segments} segments; raise the segment limit or "
                "use fewer break points (e.g. mode 'full' where the model allows it)"
            )
        graph = self.backend.new_graph()
        self.backend.begin_segment(graph, self.pool)
        self._open = graph
        self._segments_opened += 1

    def _end_segment(self) -> None:
        graph, self._open = self._open, None
        if self.backend.end_segment(graph):
            self._graphs.append(graph)
            self._steps.append(graph.replay)
        else:
            graph.reset()

    def _abort(self) -> None:
        graph, self._open = self._open, None
        if graph is not None:
            self.backend.abort_segment(graph, self.pool, self.device)
