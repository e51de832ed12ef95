"""A CPU stand-in for CUDA graphs, for testing the runner where there is no GPU.

A CUDA graph does not re-run Python: it re-launches the recorded kernels on the recorded
addresses. Whatever the caller passes at replay time is invisible unless it was copied into those
addresses first. :class:`RecordedGraph` keeps exactly that property: while capturing, a
``TorchDispatchMode`` records every aten op together with *the memory* it read and wrote (each
tensor argument is replaced by a new alias of its storage, so a later ``param.data = other`` or a
module attribute swapped for another tensor does not reach the recording, exactly as a graph keeps
reading the old address); ``replay()`` re-executes the ops on that memory and writes each result
back into the recorded output storage. A runner that forgot to copy fresh inputs into its static
buffers, or that replays after weights moved, replays stale values here just as it would on a GPU.
The aliases keep the storages alive, so a stale replay reads the old values rather than freed
memory (a GPU would read whatever reused the address: worse, never better).

Two things the stand-in cannot show, covered by GPU tests instead: a 0-dim CPU tensor read as a
host scalar (here every tensor is a host tensor), and pool-borrowed bridge memory of breakable
graphs (CPU allocations cannot be routed into a pool, so every break owns its tensors).

It also refuses what a real capture refuses: ops that read device data on the host
(``.item()``, ``nonzero``, ``torch.equal``) raise, as ``cudaErrorStreamCaptureUnsupported`` would.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch
from torch.utils._pytree import tree_flatten, tree_map

from .dispatch_modes import TypePreservingDispatchMode

aten = torch.ops.aten

#: Ops that synchronise with the host or produce data-dependent shapes: illegal in a CUDA capture.
HOST_SYNC_OPS = frozenset(
    {
        aten._local_scalar_dense.default,
        aten.item.default,
        aten.is_nonzero.default,
        aten.equal.default,
        aten.nonzero.default,
        aten.masked_select.default,
        aten.unique_consecutive.default,
        aten._unique2.default,
    }
)


class CaptureUnsupportedError(RuntimeError):
    """Raised by the stand-in for an op a real CUDA graph capture would reject."""


@dataclass
class _RecordedOp:
    func: Callable
    args: tuple
    kwargs: dict
    out: Any


class _Recorder(TypePreservingDispatchMode):
    def __init__(self, ops: list[_RecordedOp]):
        super().__init__()
        self.ops = ops

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.meet(tree_flatten((args, kwargs))[0])
        if any(getattr(t, "__torch_dispatch__", None) is not torch.Tensor.__torch_dispatch__ for t in types):
            # A tensor subclass (ComfyUI's quantized weights) has no storage of its own: let it
            # unwrap itself; its ops on plain inner tensors come back here and are recorded.
            return NotImplemented
        if func in HOST_SYNC_OPS:
            raise CaptureUnsupportedError(
                f"operation not permitted when stream is capturing: {func} reads device data on the host"
            )
        out = func(*args, **kwargs)
        recorded_args, recorded_kwargs = tree_map(_alias, (args, kwargs))
        self.ops.append(_RecordedOp(func, recorded_args, recorded_kwargs, out))
        return out


def _alias(obj: Any) -> Any:
    """A new tensor over the same storage, offset, shape and strides as ``obj`` (else ``obj``)."""
    if not isinstance(obj, torch.Tensor):
        return obj
    alias = torch.empty(0, dtype=obj.dtype, device=obj.device)
    # size(), not shape: a subclass may report another shape (GGUF's GGMLTensor: the dequantized one).
    return alias.set_(obj.untyped_storage(), obj.storage_offset(), obj.size(), obj.stride())


class RecordedGraph:
    """``torch.cuda.CUDAGraph``'s surface, recorded as aten ops on CPU tensors."""

    def __init__(self) -> None:
        self._ops: list[_RecordedOp] = []
        self._mode: _Recorder | None = None
        self._captured = False

    def capture_begin(self, pool: Any = None, capture_error_mode: str = "global") -> None:
        if self._mode is not None or self._captured:
            raise RuntimeError("RecordedGraph: capture_begin on a graph that is capturing or captured")
        self._mode = _Recorder(self._ops)
        self._mode.__enter__()

    def capture_end(self) -> None:
        if self._mode is None:
            raise RuntimeError("RecordedGraph: capture_end without capture_begin")
        mode, self._mode = self._mode, None
        mode.__exit__(None, None, None)
        self._captured = True

    @property
    def num_ops(self) -> int:
        return len(self._ops)

    def replay(self) -> None:
        if not self._captured:
            raise RuntimeError("RecordedGraph: replay without a preceding successful capture")
        for op in self._ops:
            fresh = op.func(*op.args, **op.kwargs)
            _write_back(op.out, fresh)

    def reset(self) -> None:
        if self._mode is not None:
            mode, self._mode = self._mode, None
            mode.__exit__(None, None, None)
        self._ops.clear()
        self._captured = False


def _write_back(recorded: Any, fresh: Any) -> None:
    """Put a re-executed op's result where later ops will read it: the recorded storage."""
    rec_leaves, _ = tree_flatten(recorded)
    new_leaves, _ = tree_flatten(fresh)
    for rec, new in zip(rec_leaves, new_leaves):
        if not isinstance(rec, torch.Tensor) or rec is new:
            continue
        same = (
            new.untyped_storage().data_ptr() == rec.untyped_storage().data_ptr()
            and new.storage_offset() == rec.storage_offset()
            and new.stride() == rec.stride()
        )
        if not same:  # views and in-place ops already wrote into the recorded memory
            rec.copy_(new)


class RecordingBackend:
    """Backend of :class:`RecordedGraph` segments on CPU tensors (tests only)."""

    device_type = "cpu"

    def __init__(self) -> None:
        self._pools: list[list[RecordedGraph]] = []

    def new_pool(self, device: torch.device) -> list[RecordedGraph]:
        pool: list[RecordedGraph] = []
        self._pools.append(pool)
        return pool

    def new_graph(self) -> RecordedGraph:
        return RecordedGraph()

    def begin_segment(self, graph: RecordedGraph, pool: list[RecordedGraph]) -> None:
        graph.capture_begin(pool=pool)
        pool.append(graph)

    def end_segment(self, graph: RecordedGraph) -> bool:
        graph.capture_end()
        return graph.num_ops > 0

    def abort_segment(self, graph: RecordedGraph, pool: list[RecordedGraph], device: torch.device) -> None:
        graph.reset()

    @contextlib.contextmanager
    def capture_stream(self, device: torch.device) -> Iterator[None]:
        yield

    def synchronize(self, device: torch.device) -> None:
        return None

    def pool_bytes(self, pool: list[RecordedGraph], device: torch.device) -> int:
        """Bytes of the distinct storages the pool's live graphs wrote (their 'pool memory')."""
        seen: dict[int, int] = {}
        for graph in pool:
            for op in graph._ops:
                for t in tree_flatten(op.out)[0]:
                    if isinstance(t, torch.Tensor):
                        storage = t.untyped_storage()
                        seen[storage.data_ptr()] = storage.nbytes()
        return sum(seen.values())

    def allocate_in_pool(self, pool: list[RecordedGraph], device: torch.device) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def pool_residency(self, pool: list[RecordedGraph], device: torch.device):
        # Recorded ops hold their tensors, so nothing here can be held without ownership.
        return lambda tensor: False
