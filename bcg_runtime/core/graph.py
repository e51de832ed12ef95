"""BreakableGraph: one call captured as graph segments with eager breaks between them.

Capture (:meth:`BreakableGraph.capture`) runs the callable once on the backend's capture stream.
It opens segment 0; each :func:`~bcg_runtime.core.breaks.graph_break` reached by the callable
closes the open segment, runs the break eagerly, records a :class:`BreakRecord` and opens the next
segment. Replay (:meth:`BreakableGraph.replay`) walks the same schedule on the caller's stream:
segment, break, segment, ...

Lifetime rule, the one SGLang's diffusion BCG broke (weak references, then a segfault): the
memory a break reads (its inputs, written by the segment before it) and writes (its outputs,
"bridge buffers" read by the segments after it) must be the recorded memory at every replay.
Two ways keep that true:

* **Liveness-borrowed** (CUDA, where the pool is a ``MemPool``): the break's eager allocations
  are routed into the graph's pool, so inputs and outputs both live in the pool. The record keeps
  *non-owning* views of them, and the model code's own references decide when each block is free
  during capture, exactly as they do in eager. The allocator may then give a freed block to a
  later segment of the same capture; replay runs the same schedule in the same order, so each
  block holds the same tensor at the same moment as during capture, and the break reads and
  writes its memory while it is live. Pool memory is never returned while a graph uses the pool,
  so a view never dangles. This keeps a breakable capture about as small as a one-graph capture
  (holding every break's tensors took 10-34 GiB on FLUX.1).
* **Owned** (anything not in the pool: tensors made before the capture, backends that cannot
  route): the record holds a strong reference for the graph's life.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable, ContextManager

import torch

from . import breaks
from .backends import GraphBackend
from .trees import copy_tree_into, map_tensors, tensor_bytes


class SegmentLimitExceeded(RuntimeError):
    """A capture produced more segments than the runner allows."""


@dataclass
class BreakRecord:
    """An eager region between two segments and the memory that crosses it (see the module doc).

    ``owned_bytes`` counts the bridge buffers held strongly: those outside the pool.
    """

    fn: Callable
    args: tuple
    kwargs: dict
    output: Any  # the bridge buffers: their addresses are baked into the next segment
    owned_bytes: int = 0

    def replay(self) -> None:
        copy_tree_into(self.output, self.fn(*self.args, **self.kwargs), path=_name(self.fn))


def borrowed_view(tensor: torch.Tensor) -> torch.Tensor:
    """A view of ``tensor``'s memory that does not keep the memory allocated.

    Only for memory whose reuse is ordered by the graph schedule (see the module docstring).
    """
    storage = tensor.untyped_storage()
    alias = torch._C._construct_storage_from_data_pointer(storage.data_ptr(), tensor.device, storage.nbytes())
    view = torch.empty(0, dtype=tensor.dtype, device=tensor.device)
    return view.set_(alias, tensor.storage_offset(), tensor.shape, tensor.stride())


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
    _in_pool: Callable[[torch.Tensor], bool] | None = field(default=None, repr=False)
    #: ``(name, carried) -> context`` entered around each break's eager run: the outside-reads
    #: audit (:meth:`.outside_reads.OutsideReads.breaking`) counts only a break's arguments as reads.
    break_scope: Callable[[str, Any], ContextManager] | None = None

    @property
    def num_segments(self) -> int:
        return len(self._graphs)

    @property
    def num_breaks(self) -> int:
        return len(self._breaks)

    @property
    def bridge_bytes(self) -> int:
        """Bytes of bridge buffers the breaks own (outside the pool; pool bytes are counted there)."""
        return sum(b.owned_bytes for b in self._breaks)

    def capture(self, fn: Callable, args: tuple = (), kwargs: dict | None = None) -> Any:
        """Run ``fn(*args, **kwargs)`` under capture and return its (pool-resident) output.

        The caller must already be on the right device, with inputs in static buffers, and should
        have run ``fn`` eagerly before (lazy initialisation must not happen under capture). On any
        error the partial capture is discarded and the error propagates.
        """
        if self._graphs or self._breaks:
            raise RuntimeError("BreakableGraph.capture: this graph already holds a capture; reset() it first")
        kwargs = kwargs or {}
        self._in_pool = self.backend.pool_residency(self.pool, self.device)
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
        scope = self.break_scope(_name(fn), (args, kwargs)) if self.break_scope else contextlib.nullcontext()
        with scope, self.backend.allocate_in_pool(self.pool, self.device):
            output = fn(*args, **kwargs)
        (held_args, held_kwargs), _ = self._hold((args, kwargs))
        held_output, owned_bytes = self._hold(output)
        record = BreakRecord(fn, held_args, held_kwargs, held_output, owned_bytes)
        self._breaks.append(record)
        self._steps.append(record.replay)
        self._begin_segment()
        return output

    def _hold(self, tree: Any) -> tuple[Any, int]:
        """``tree`` with its pool-resident tensors replaced by borrowed views, and the bytes of the
        tensors it still owns."""
        owned = 0

        def hold(tensor: torch.Tensor) -> torch.Tensor:
            nonlocal owned
            if self._in_pool(tensor):
                return borrowed_view(tensor)
            owned += tensor_bytes(tensor)
            return tensor

        return map_tensors(tree, hold), owned

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
        # Open before beginning: a begin that fails midway (the allocator already routing into the
        # pool, the stream perhaps capturing) must be undone by ``_abort`` like any failed capture.
        self._open = graph
        self.backend.begin_segment(graph, self.pool)
        self._segments_opened += 1

    def _end_segment(self) -> None:
        # ``_open`` is cleared only once the capture really ended: if ``end_segment`` raises, the
        # caller's ``_abort`` must still end the stream capture and the pool routing, or the
        # allocator keeps a capture "underway" and the next pool destructor aborts the process.
        graph = self._open
        kept = self.backend.end_segment(graph)
        self._open = None
        if kept:
            self._graphs.append(graph)
            self._steps.append(graph.replay)
        else:
            graph.reset()

    def _abort(self) -> None:
        graph, self._open = self._open, None
        if graph is not None:
            self.backend.abort_segment(graph, self.pool, self.device)
