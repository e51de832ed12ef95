"""Graph backends: what a segment is made of.

A backend supplies graphs with the ``torch.cuda.CUDAGraph`` surface (``capture_begin``,
``capture_end``, ``replay``, ``reset``), memory pools, a capture stream and memory accounting.
:class:`CudaGraphBackend` is the real thing; :class:`bcg_runtime.core.cpu_graph.RecordingBackend`
is a CPU stand-in with the same dangerous property (replay touches recorded storages only), so the
runner's logic can be tested where there is no GPU.
"""

from __future__ import annotations

import bisect
import contextlib
import warnings
from typing import Any, Callable, Iterator, Protocol

import torch


class GraphBackend(Protocol):
    """The operations :class:`~bcg_runtime.core.graph.BreakableGraph` needs from a graph system."""

    #: ``torch.device.type`` of the tensors this backend can capture.
    device_type: str

    def new_pool(self, device: torch.device) -> Any: ...

    def new_graph(self) -> Any: ...

    def begin_segment(self, graph: Any, pool: Any) -> None: ...

    def end_segment(self, graph: Any) -> bool:
        """End capture; return False when the segment recorded no work (it is then dropped)."""

    def abort_segment(self, graph: Any, pool: Any, device: torch.device) -> None:
        """End a capture that failed midway and leave no capture state behind."""

    def capture_stream(self, device: torch.device) -> contextlib.AbstractContextManager: ...

    def synchronize(self, device: torch.device) -> None: ...

    def pool_bytes(self, pool: Any, device: torch.device) -> int: ...

    def allocate_in_pool(self, pool: Any, device: torch.device) -> contextlib.AbstractContextManager:
        """Route this thread's allocations into ``pool`` outside a capture (for eager breaks)."""

    def pool_residency(self, pool: Any, device: torch.device) -> Callable[[torch.Tensor], bool]:
        """A predicate telling whether a tensor's memory belongs to ``pool``.

        Only pool-resident tensors may be held without ownership across a break (see
        :mod:`bcg_runtime.core.graph`); a backend that cannot route or tell answers False always.
        """


class CudaGraphBackend:
    """Segments are ``torch.cuda.CUDAGraph`` objects captured on a side stream, replayed on the
    caller's current stream (``CUDAGraph.replay`` launches there, so input copies, segments, eager
    breaks and output clones are stream-ordered without extra waits)."""

    device_type = "cuda"

    def new_pool(self, device: torch.device) -> Any:
        # A MemPool holds its own reference on the allocator's pool for as long as the object
        # lives, so the pool outlives graphs that are reset (an empty segment, a failed shape)
        # and can take routed eager allocations between segments. A bare graph_pool_handle has
        # no such reference: the first reset of its only graph would mark it freeable.
        # cudaMallocAsync (ComfyUI's default allocator on NVIDIA) has no MemPool: fall back to a
        # plain handle, with breaks owning what crosses them.
        with torch.cuda.device(device):
            if _MEMPOOL_TYPES and torch.cuda.get_allocator_backend() == "native":
                return torch.cuda.MemPool()
            return torch.cuda.graph_pool_handle()

    def new_graph(self) -> torch.cuda.CUDAGraph:
        return torch.cuda.CUDAGraph()

    def begin_segment(self, graph: torch.cuda.CUDAGraph, pool: Any) -> None:
        # thread_local: ComfyUI serves HTTP and previews from other threads; their CUDA calls must
        # neither invalidate our capture nor be invalidated by it.
        graph.capture_begin(pool=_pool_id(pool), capture_error_mode="thread_local")

    def end_segment(self, graph: torch.cuda.CUDAGraph) -> bool:
        # An empty capture (two breaks back to back) instantiates nothing and cannot replay;
        # torch reports it only as a warning, which is the exact signal we need.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            graph.capture_end()
        return not any("CUDA Graph is empty" in str(w.message) for w in caught)

    def abort_segment(self, graph: torch.cuda.CUDAGraph, pool: Any, device: torch.device) -> None:
        try:
            graph.capture_end()
        except Exception:
            # capture_end throws at cudaStreamEndCapture of an invalidated capture (the stream does
            # leave capture mode) before it tells the caching allocator to stop routing this
            # stream's allocations into the pool; without this the next capture_begin fails with
            # "already recording to mempool" and every later shape would be lost too.
            end_pool = getattr(torch._C, "_cuda_endAllocateToPool", None)
            if end_pool is not None:
                index = device.index if device.index is not None else torch.cuda.current_device()
                try:
                    end_pool(index, _pool_id(pool))
                except RuntimeError:
                    pass  # capture_end got as far as ending the routing before it threw
            _end_generator_capture(device)
        graph.reset()

    @contextlib.contextmanager
    def capture_stream(self, device: torch.device) -> Iterator[None]:
        index = device.index if device.index is not None else torch.cuda.current_device()
        stream = _CAPTURE_STREAMS.get(index)
        if stream is None:
            stream = _CAPTURE_STREAMS[index] = torch.cuda.Stream(device=index)
        caller = torch.cuda.current_stream(index)
        stream.wait_stream(caller)
        try:
            with torch.cuda.stream(stream):
                yield
        finally:
            caller.wait_stream(stream)

    def synchronize(self, device: torch.device) -> None:
        torch.cuda.synchronize(device)

    def pool_bytes(self, pool: Any, device: torch.device) -> int:
        """Bytes the caching allocator holds in ``pool`` (segments tagged with its id)."""
        try:
            segments = _read_pool_segments(pool, device)
        except Exception:  # snapshot is best-effort accounting, never a reason to fail a capture
            return 0
        return sum(seg.get("total_size", 0) for seg in segments)

    def allocate_in_pool(self, pool: Any, device: torch.device) -> contextlib.AbstractContextManager:
        if not isinstance(pool, _MEMPOOL_TYPES):
            return contextlib.nullcontext()
        return torch.cuda.use_mem_pool(pool, device)

    def pool_residency(self, pool: Any, device: torch.device) -> Callable[[torch.Tensor], bool]:
        if not isinstance(pool, _MEMPOOL_TYPES):
            return lambda tensor: False  # allocations between segments were not routed into it
        return _PoolResidency(pool, device)


#: One capture stream per device for the whole process: cuBLAS keeps a workspace (32 MiB on
#: Hopper) for every stream it has run on, so a stream per model would leave one behind per model.
_CAPTURE_STREAMS: dict[int, torch.cuda.Stream] = {}

_MEMPOOL_TYPES = (torch.cuda.MemPool,) if hasattr(torch.cuda, "MemPool") and hasattr(torch.cuda, "use_mem_pool") else ()


def _end_generator_capture(device: torch.device) -> None:
    """Take the device's default CUDA generator out of capture mode after a capture that threw.

    ``capture_begin`` puts the generator in capture mode and ``capture_end`` takes it out only
    after ``cudaStreamEndCapture`` succeeded; an invalidated capture (a host sync inside it)
    throws first, and every later random op on the device (a sampler's noise, eager or not) then
    fails with "Offset increment outside graph capture encountered unexpectedly". A fresh clone of
    its state (same seed and offset, not capturing) put in its place ends that.
    """
    index = device.index if device.index is not None else torch.cuda.current_device()
    generator = torch.cuda.default_generators[index]
    if hasattr(generator, "graphsafe_set_state") and hasattr(generator, "clone_state"):
        generator.graphsafe_set_state(generator.clone_state())


def _pool_id(pool: Any) -> tuple:
    return tuple(pool.id) if isinstance(pool, _MEMPOOL_TYPES) else tuple(pool)


def _pool_segments(segments: list[dict], pool: Any) -> list[dict]:
    wanted = _pool_id(pool)
    return [seg for seg in segments if tuple(seg.get("segment_pool_id", ())) == wanted]


def _read_pool_segments(pool: Any, device: torch.device) -> list[dict]:
    """The pool's segments as the allocator has them now.

    Read from the whole allocator's snapshot (``_snapshot``, which passes no pool id to C) and
    filtered by pool id. The per-pool form, ``memory_snapshot(pool.id)``, hands torch's C side a
    tuple whose items it releases once too often (pytorch/pytorch PR #196366, open in torch 2.11):
    harmless while pool ids are small cached ints, but once a process has made more than 256 pools
    the id is a heap int that gets freed under its tuple, and the next read crashes the process.
    """
    return _pool_segments(torch.cuda.memory._snapshot(device).get("segments", []), pool)


class _PoolResidency:
    """``tensor -> bool``: does the tensor's storage lie in one of the pool's segments?

    The segment list is re-read from the allocator only on a miss: pool segments are never
    returned while the pool is in use, so a hit stays valid, and a capture adds few segments.
    Storages found outside after a fresh read are remembered as outside: memory outside the pool
    cannot become pool memory while the tensor that owns it is alive.
    """

    def __init__(self, pool: Any, device: torch.device):
        self._pool = pool
        self._device = device
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._outside: set[int] = set()

    def __call__(self, tensor: torch.Tensor) -> bool:
        if tensor.device.type != "cuda":
            return False
        address = tensor.untyped_storage().data_ptr()
        if address in self._outside:
            return False
        if self._contains(address):
            return True
        self._refresh()
        if self._contains(address):
            return True
        self._outside.add(address)
        return False

    def _contains(self, address: int) -> bool:
        i = bisect.bisect_right(self._starts, address) - 1
        return i >= 0 and address < self._ends[i]

    def _refresh(self) -> None:
        segments = sorted(
            (seg["address"], seg["address"] + seg["total_size"])
            for seg in _read_pool_segments(self._pool, self._device)
        )
        self._starts = [start for start, _ in segments]
        self._ends = [end for _, end in segments]


def backend_for(device: torch.device) -> GraphBackend | None:
    """The real backend for a device, or ``None`` where graphs cannot be captured."""
    if device.type == "cuda" and torch.cuda.is_available():
        return CudaGraphBackend()
    return None
