"""The Comfy model compiler (ComfyUI 0.34+) driven around a supported DiT, for measurement only.

No DiT of the pack's families calls the compiler in any ComfyUI file read (docs/compatibility.md);
the newer DiTs that do (Qwen-Image 2.1, MiniMax H3) are not supported families. To measure BCG
with an active malloc graph around a supported family's real ComfyUI class, :func:`simulate`
makes that class call the compiler the way those DiTs do, for the length of a ``with`` block:

- ``placement="outer"`` (MiniMax H3): ``malloc_graph_begin(device)`` in ``forward`` *before* the
  DIFFUSION_MODEL wrappers run (so around BCG's hook and its replays), ``malloc_graph_end()`` after;
- ``placement="inner"`` (Qwen-Image 2.1): both inside ``_forward``, i.e. inside BCG's hook, where
  a replay skips them;
- both: each block calls ``prefetch_queue_pop(None, device, block, malloc_scope="block")`` (one
  named scope per block) before it runs, ``_forward`` closes the last scope after its loop
  (``prefetch_queue_pop(None, device, None, malloc_scope="block")``), and the first block of each
  forward allocates a scratch tensor with the graph paused (``pause_malloc_graph()``, as
  Qwen-Image 2.1 does around its prefix-cache fill). No prefetch queue is made (``queue=None``,
  as for a model whose weights stay resident: BCG's fixed-address twin).

:meth:`Compiler.end_of_run` plays ``execution.py``'s ``cleanup_prefetch_queues()`` after a node
and returns what the run's graph did (:class:`CompilerRun`). The compiler is the host's
``comfy.model_prefetch`` when it has the device-keyed generation (``malloc_graph_begin(device)``,
the assembled host's newer file), else :class:`AimdoCompiler`, which calls
``comfy_aimdo.malloc_graph`` (0.6.0) in the same order. Tools only: the product never imports this.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
from dataclasses import asdict, dataclass
from typing import Any, Iterator

import torch

PLACEMENTS = ("outer", "inner")
#: Bytes the first block allocates while the graph is paused (what a prefix cache would keep).
SCRATCH_BYTES = 1 << 20


@dataclass
class CompilerRun:
    """One sampling run's malloc graph: how often the DiT opened it (``begins``: forwards that
    recorded or replayed it), block scopes entered, graph breaks (a scope whose allocations differed
    from the recorded pattern), rogues (graph allocations still alive when the run ended), and the
    graph's sizes just before the cleanup (``peak_used``: most bytes it handed out at once)."""

    begins: int = 0
    blocks: int = 0
    pauses: int = 0
    breaks: int = 0
    rogues: int = 0
    peak_used: int = 0
    virtual_bytes: int = 0
    physical_bytes: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


def init_aimdo(device: torch.device) -> str | None:
    """Turn comfy-aimdo on for ``device`` as ComfyUI's ``main.py`` does under Dynamic VRAM
    (``control.init``, ``control.init_devices``, ``comfy.memory_management.aimdo_enabled``);
    None when it is on, else why not. Needs comfy-aimdo 0.6.0 (the first with ``malloc_graph``)."""
    try:
        import comfy_aimdo.control as control
        import comfy_aimdo.malloc_graph  # noqa: F401
    except ImportError as exc:
        return f"comfy-aimdo has no malloc_graph ({exc}): the compiler's API arrived in comfy-aimdo 0.6.0"
    if device.type != "cuda":
        return f"the malloc graph needs a CUDA device, not {device}"
    if not control.init():
        return "comfy-aimdo could not load its library"
    if not control.devctxs and not control.init_devices([(device.index or 0, 0)]):
        return "comfy-aimdo could not initialise the device"
    import comfy.memory_management

    comfy.memory_management.aimdo_enabled = True
    return None


def ensure_compiler_flags() -> list[str]:
    """Give ``comfy.cli_args.args`` the compiler flags of ComfyUI 0.34+ (``cli_args.py@f90acc3``)
    at their defaults where the host lacks them; returns the names it added (the simulated part
    of an assembled 0.33 host, whose ``cli_args.py`` predates them)."""
    from comfy.cli_args import args

    added = []
    for name in ("disable_comfy_compiler", "assert_graph_breaks", "disable_cuda_graphs"):
        if not hasattr(args, name):
            setattr(args, name, False)
            added.append(name)
    return added


class Compiler:
    """What a DiT calls: ``begin``, ``block``, ``blocks_done``, ``end``, ``paused``; plus
    ``end_of_run`` (the node's cleanup) and ``enabled``."""

    source = "?"

    def __init__(self) -> None:
        self.run = CompilerRun()

    def enabled(self, device: torch.device) -> bool:
        raise NotImplementedError

    def begin(self, device: torch.device) -> None:
        if self.enabled(device):
            self.run.begins += 1
        self._begin(device)

    def block(self, device: torch.device, module: Any) -> None:
        if module is not None and self._active():
            self.run.blocks += 1
        self._block(device, module)

    def blocks_done(self, device: torch.device) -> None:
        self._block(device, None)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        if self._active():
            self.run.pauses += 1
        with self._paused():
            yield

    def end_of_run(self) -> CompilerRun:
        run, self.run = self._finish(self.run), CompilerRun()
        return run

    # what each driver implements
    def _begin(self, device):
        raise NotImplementedError  # noqa: E704

    def _block(self, device, module):
        raise NotImplementedError  # noqa: E704

    def end(self):
        raise NotImplementedError  # noqa: E704

    def _paused(self):
        raise NotImplementedError  # noqa: E704

    def _active(self) -> bool:
        raise NotImplementedError  # noqa: E704

    def _finish(self, run: CompilerRun) -> CompilerRun:
        raise NotImplementedError  # noqa: E704


def _graph_sizes(run: CompilerRun, graph: Any) -> None:
    run.peak_used, run.virtual_bytes, run.physical_bytes = (
        int(graph.peak_used),
        int(graph.virtual_bytes),
        int(graph.physical_bytes),
    )


class HostCompiler(Compiler):
    """The running ComfyUI's own ``comfy.model_prefetch`` (the device-keyed generation)."""

    source = "comfy.model_prefetch (the host's)"

    def __init__(self, prefetch: Any):
        super().__init__()
        self.mp = prefetch

    def enabled(self, device):
        return bool(self.mp.malloc_graph_enabled(device))

    def _graph(self):
        graph = self.mp.MALLOC_GRAPHS.get(threading.get_ident())
        return graph if graph is not None and getattr(graph, "_comfy_active", False) else None

    def _active(self):
        return self._graph() is not None

    def _begin(self, device):
        self.mp.malloc_graph_begin(device)

    def _block(self, device, module):
        self.mp.prefetch_queue_pop(None, device, module, malloc_scope="block")

    def end(self):
        self.mp.malloc_graph_end()

    def _paused(self):
        return self.mp.pause_malloc_graph()

    def _finish(self, run):
        run.breaks = int(self.mp.MALLOC_GRAPH_BREAKS)
        graph = self.mp.MALLOC_GRAPHS.get(threading.get_ident())
        if graph is not None:
            _graph_sizes(run, graph)
        rogues_before = int(self.mp.MALLOC_GRAPH_ROGUES)
        self.mp.cleanup_malloc_graph()
        run.rogues = int(self.mp.MALLOC_GRAPH_ROGUES) - rogues_before
        self.mp.cleanup_prefetch_queues()
        return run


class AimdoCompiler(Compiler):
    """``comfy_aimdo.malloc_graph`` driven in ``model_prefetch.py@03fb330``'s order (one graph
    per thread: ``record`` at the first begin, ``push`` at later ones; ``iterate`` per block;
    ``pop`` at the end; ``abort`` and ``rogue_count`` at the run's cleanup), for a host whose
    ``comfy.model_prefetch`` has no compiler."""

    source = "comfy_aimdo.malloc_graph (driven directly)"

    def __init__(self):
        super().__init__()
        import comfy_aimdo.malloc_graph as malloc_graph

        self.malloc_graph = malloc_graph
        self.graphs: dict[int, Any] = {}
        self.active: dict[int, bool] = {}

    def enabled(self, device):
        import comfy.memory_management
        from comfy.cli_args import args

        return (
            not getattr(args, "disable_comfy_compiler", False)
            and comfy.memory_management.aimdo_enabled
            and device.type == "cuda"
        )

    def _graph(self):
        tid = threading.get_ident()
        return self.graphs.get(tid) if self.active.get(tid) else None

    def _active(self):
        return self._graph() is not None

    def _begin(self, device):
        if not self.enabled(device):
            return
        import comfy.model_management
        from comfy.cli_args import args

        tid = threading.get_ident()
        graph = self.graphs.get(tid)
        if graph is None:
            graph = self.malloc_graph.record(
                comfy.model_management.current_stream(device), getattr(args, "assert_graph_breaks", False)
            )
            self.graphs[tid] = graph
        else:
            graph.push()
        self.active[tid] = True

    def _block(self, device, module):
        graph = self._graph()
        if graph is not None and graph.iterate("block" if module is not None else None):
            self.run.breaks += 1

    def end(self):
        graph = self._graph()
        if graph is not None:
            if graph.pop():
                self.run.breaks += 1
            self.active[threading.get_ident()] = False

    @contextlib.contextmanager
    def _paused(self):
        graph = self._graph()
        if graph is None:
            yield
            return
        graph.pause()
        try:
            yield
        finally:
            graph.resume()

    def _finish(self, run):
        tid = threading.get_ident()
        graph = self.graphs.pop(tid, None)
        if graph is not None:
            _graph_sizes(run, graph)
            if self.active.pop(tid, False):
                graph.abort()
            run.rogues = int(graph.rogue_count)
            del graph
        return run


def make_compiler() -> Compiler:
    """The host's compiler where its ``comfy.model_prefetch`` has the device-keyed
    ``malloc_graph_begin``, else :class:`AimdoCompiler`."""
    import comfy.model_prefetch as prefetch

    begin = getattr(prefetch, "malloc_graph_begin", None)
    if callable(begin) and list(inspect.signature(begin).parameters) == ["device"]:
        return HostCompiler(prefetch)
    return AimdoCompiler()


def _tensor_device(args: tuple, kwargs: dict) -> torch.device | None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            return value.device
    return None


@contextlib.contextmanager
def simulate(
    diffusion_model: torch.nn.Module, block_attrs: tuple[str, ...], compiler: Compiler, placement: str
) -> Iterator[None]:
    """Make ``type(diffusion_model)`` and its block classes call ``compiler`` (see the module
    docstring) until the block ends; every instance of those classes does (a BCG twin too)."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement: '{placement}' is not one of {', '.join(PLACEMENTS)}")
    dit = type(diffusion_model)
    blocks = {type(b) for attr in block_attrs for b in getattr(diffusion_model, attr)}
    saved = [
        (cls, name, cls.__dict__[name])
        for cls in (dit, *blocks)
        for name in ("forward", "_forward")
        if name in cls.__dict__
    ]
    state = {"first_block": False}

    def block_forward(original):
        @functools.wraps(original)
        def forward(self, *args, **kwargs):
            device = _tensor_device(args, kwargs)
            compiler.block(device, self)
            if state["first_block"]:
                state["first_block"] = False
                with compiler.paused():
                    torch.empty(SCRATCH_BYTES, dtype=torch.uint8, device=device)
            return original(self, *args, **kwargs)

        return forward

    def dit_forward(original):
        @functools.wraps(original)
        def forward(self, *args, **kwargs):
            device = _tensor_device(args, kwargs)
            compiler.begin(device)
            state["first_block"] = True
            out = original(self, *args, **kwargs)
            compiler.end()
            return out

        return forward

    def dit_inner(original, opens: bool):
        @functools.wraps(original)
        def _forward(self, *args, **kwargs):
            device = _tensor_device(args, kwargs)
            if opens:
                compiler.begin(device)
                state["first_block"] = True
            out = original(self, *args, **kwargs)
            compiler.blocks_done(device)
            if opens:
                compiler.end()
            return out

        return _forward

    try:
        for cls in blocks:
            cls.forward = block_forward(cls.forward)
        if placement == "outer":
            dit.forward = dit_forward(dit.forward)
        dit._forward = dit_inner(dit._forward, opens=placement == "inner")
        yield
    finally:
        for cls in (dit, *blocks):
            for name in ("forward", "_forward"):
                if name in cls.__dict__:
                    delattr(cls, name)
        for cls, name, fn in saved:
            setattr(cls, name, fn)
