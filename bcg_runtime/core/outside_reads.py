"""The device memory a forward reads that the forward itself did not make.

A CUDA graph replays its kernels on the addresses they had at capture. Memory the forward
allocated during the capture lives in the graph's pool and is the graph's own; everything else a
kernel reads is *outside* memory: the static input buffers, the model's weights, and whatever
else the forward reaches, such as a positional table an ``lru_cache`` keeps, a tensor in an
opaque argument, a buffer some module-level code holds. The graph holds none of it. Whether a
replay is still eager's answer rests on each of those tensors being alive and unchanged, so the
runner must know them all, not only the ones somebody listed.

:class:`OutsideReads` is a ``TorchDispatchMode`` for one eager run of the forward. Every aten op's
tensor arguments are looked up by the storage they live in (a view reads its base's storage);
storages that some earlier op of the same run returned as new memory are the forward's own, every
other storage on the run's device is recorded once, as :class:`OutsideRead`, with the op that
first read it and whether some op wrote it. A quantised weight (a tensor subclass that keeps its
data in inner tensors) is looked up by its inner tensors. ``lift_fresh`` (a tensor Python built
inside the forward, ``torch.tensor(...)``) makes its tensor the forward's own.

A break (``graph_break``) is eager at every replay: its Python runs again and reads what it reaches
then (the live call's ``transformer_options``, a module's current state), so what it reads is not
the graph's. Only the arguments its replay passes as captured are (:meth:`OutsideReads.breaking`);
what it returns is new memory like any op's output.

What the mode cannot see: work that bypasses the dispatcher (an inductor or Triton kernel called
directly) reads tensors the mode never meets. Such a kernel's inputs are produced by ops it does
see or are arguments and weights, so what it misses is outside memory read only by such kernels;
the exact modes the runner audits run none of those except through registered ops.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple

import torch
from torch.utils._pytree import tree_flatten

from .dispatch_modes import TypePreservingDispatchMode
from .trees import as_bits

#: Ops whose output is a tensor Python made inside the forward (``torch.tensor``, ``as_tensor``).
_FRESH = frozenset({torch.ops.aten.lift_fresh.default, torch.ops.aten.lift_fresh_copy.default})


@dataclass
class OutsideRead:
    """One outside storage: ``tensor`` as the first op that read it saw it (holding it keeps the
    memory alive), that op's name, and whether any op of the run wrote to it."""

    tensor: torch.Tensor
    op: str
    written: bool = False

    def describe(self) -> str:
        shape = ",".join(str(s) for s in self.tensor.shape)
        return f"{str(self.tensor.dtype).replace('torch.', '')}[{shape}] (first read by {self.op})"


@dataclass
class HeldTensor:
    """An outside read an entry holds for its life, and how a write into it since capture shows:

    - ``version``: the version counter at capture, for a tensor with one the forward does not write;
    - ``bits``: a copy of its bits at capture, for an inference tensor the forward does not write
      (ComfyUI samples under ``torch.inference_mode``, and tensors made there keep no version
      counter: an ``lru_cache`` table made by the first call is one). Comparing them costs a copy's
      memory and a host sync, so the runner compares them once per ``state`` it serves under (a run);
    - neither, for a tensor the forward writes itself: a replay writes it as eager does.
    """

    read: OutsideRead
    version: int | None = None
    bits: torch.Tensor | None = None

    @classmethod
    def of(cls, read: OutsideRead) -> "HeldTensor":
        if read.written:
            return cls(read)
        if read.tensor.is_inference():
            return cls(read, bits=as_bits(read.tensor).clone())
        return cls(read, version=read.tensor._version)

    def changed(self, compare_bits: bool) -> bool:
        """Whether the tensor was written since capture: its version moved, or (``compare_bits``)
        its bits differ from the copy, bit for bit (a NaN equals itself)."""
        if self.version is not None:
            return self.read.tensor._version != self.version
        if self.bits is not None and compare_bits:
            return not torch.equal(as_bits(self.read.tensor), self.bits)
        return False


def storage_key(t: torch.Tensor) -> int | None:
    """The address of the storage ``t`` lives in, or None for a tensor without one (meta, a wrapper
    subclass, an empty storage)."""
    try:
        storage = t.untyped_storage()
    except (RuntimeError, NotImplementedError, TypeError):
        return None
    if storage.nbytes() == 0 or t.device.type == "meta":
        return None
    return storage.data_ptr()


def plain_tensors(value: Any) -> Iterator[torch.Tensor]:
    """Every tensor in a pytree, a subclass that keeps its data in inner tensors (``__tensor_flatten__``)
    replaced by those inner tensors, recursively."""
    leaves, _ = tree_flatten(value)
    for leaf in leaves:
        if not isinstance(leaf, torch.Tensor):
            continue
        flatten = getattr(leaf, "__tensor_flatten__", None)
        if type(leaf) is not torch.Tensor and callable(flatten):
            names, _ = flatten()
            for name in names:
                yield from plain_tensors(getattr(leaf, name))
        else:
            yield leaf


def storage_keys(value: Any) -> set[int]:
    """The storages of every tensor in a pytree (:func:`plain_tensors`, :func:`storage_key`)."""
    return {k for k in map(storage_key, plain_tensors(value)) if k is not None}


def _op_tensors(value: Any, into: list[torch.Tensor]) -> list[torch.Tensor]:
    """:func:`plain_tensors` for what an aten op takes and returns (tensors, scalars and lists or
    tuples of them; its keyword arguments as a dict), appended to ``into``. An audited run calls
    it for every op: pytree's generic walk is most of what the audit would cost, and no other
    container reaches the dispatcher."""
    if isinstance(value, torch.Tensor):
        flatten = getattr(value, "__tensor_flatten__", None) if type(value) is not torch.Tensor else None
        if callable(flatten):
            for name in flatten()[0]:
                _op_tensors(getattr(value, name), into)
        else:
            into.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _op_tensors(item, into)
    elif isinstance(value, dict):
        for item in value.values():
            _op_tensors(item, into)
    return into


class _Op(NamedTuple):
    """What the audit needs of one op, read once from its schema: its name, where its written
    arguments sit (in-place and ``out=`` arguments: (position or None, name)), whether its output
    is a tensor Python made inside the forward (:data:`_FRESH`)."""

    name: str
    written: tuple[tuple[int | None, str], ...]
    fresh: bool

    @classmethod
    def of(cls, func: Any) -> "_Op":
        schema = getattr(func, "_schema", None)
        written = tuple(
            (None if argument.kwarg_only else index, argument.name)
            for index, argument in enumerate(schema.arguments if schema is not None else ())
            if argument.alias_info is not None and argument.alias_info.is_write
        )
        return cls(str(func), written, func in _FRESH)

    def written_arguments(self, args: tuple, kwargs: dict) -> list[Any]:
        return [
            kwargs[name] if name in kwargs else args[index]
            for index, name in self.written
            if name in kwargs or (index is not None and index < len(args))
        ]


class OutsideReads(TypePreservingDispatchMode):
    """Records the outside storages on ``device_type`` one run reads (see the module docstring):
    :attr:`found` maps each storage's address to its :class:`OutsideRead`, in the order first read."""

    def __init__(self, device_type: str):
        super().__init__()
        self.device_type = device_type
        self.found: dict[int, OutsideRead] = {}
        self._own: set[int] = set()
        self._breaks = 0  # depth of breaks running now: their ops' reads are the live call's
        self._ops: dict[Any, _Op] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        op = self._ops.get(func)
        if op is None:
            op = self._ops[func] = _Op.of(func)
        if op.fresh:
            out = func(*args, **kwargs)
            self._own.update(k for k in map(self._key, _op_tensors(out, [])) if k is not None)
            return out
        tensors = _op_tensors(kwargs, _op_tensors(args, []))
        self.meet(tensors)
        inputs: set[int] = set()
        for t in tensors:
            key = self._key(t)
            if key is None:
                continue
            inputs.add(key)
            if not self._breaks:
                self._note(t, key, op.name)
        if op.written:
            for t in _op_tensors(op.written_arguments(args, kwargs), []):
                read = self.found.get(self._key(t))
                if read is not None:
                    read.written = True
        out = func(*args, **kwargs)
        for t in _op_tensors(out, []):
            key = self._key(t)
            if key is not None and key not in inputs:  # new memory (a view or in-place result shares an input's)
                self._own.add(key)
        return out

    @contextlib.contextmanager
    def breaking(self, name: str, carried: Any) -> Iterator[None]:
        """A break named ``name`` runs inside: ``carried`` (its arguments, which each replay passes
        again as captured) are reads of the graph; the reads of its ops are the live call's, since
        the break runs again at every replay. Writes and new memory are recorded as elsewhere."""
        for t in plain_tensors(carried):
            key = self._key(t)
            if key is not None:
                self._note(t, key, f"graph_break({name})")
        self._breaks += 1
        try:
            yield
        finally:
            self._breaks -= 1

    def _note(self, t: torch.Tensor, key: int, op: str) -> None:
        if key not in self._own and key not in self.found:
            self.found[key] = OutsideRead(t, op)

    def _key(self, t: torch.Tensor) -> int | None:
        return storage_key(t) if t.device.type == self.device_type else None

    def outside(self, known: set[int]) -> list[OutsideRead]:
        """The outside reads whose storage is not in ``known`` (:func:`storage_keys` of the static
        inputs and of the weights the caller binds by address)."""
        return [read for key, read in self.found.items() if key not in known]
