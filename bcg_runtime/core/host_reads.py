"""Values a forward reads from the device on the host, handed back to its capture in order.

Some forwards read a device value into Python on every call and steer with it: MiniMax H3 turns
the sampler's sigma into ``float(1.0 - sigma)`` and builds its timestep-embedding rows from that
number. A read is a synchronisation, which CUDA graph capture refuses; and whatever Python built
from the value is frozen into the graph. Both are answered here, under one condition the caller
owns: **the call's key determines every value read** (the adapter keys the call on the sigma it
reads, so a graph captured at one step serves exactly the calls at that step).

:class:`HostReads` is a ``TorchFunctionMode``. :meth:`~HostReads.recording` around an eager run
of the *live* call keeps each read's value, in call order (``float()``, ``int()``, ``bool()``,
``index()``, ``.item()``, ``.tolist()`` of a tensor on ``device_type``); :meth:`~HostReads.replaying`
around the warm-up runs and the capture returns those values in the same order without touching
the device. A run whose reads differ from the recording (another operation, another shape, more
or fewer reads) raises :class:`HostReadMismatch`: the capture fails and the call runs eager.

Why the live call and not the capture's inputs: the runner captures on shifted copies of the
inputs (so that a value frozen from them shows in the proof). A value read from those would be a
step that never happens; the live call's values are the ones every call of this key reads, and
the proof (eager on the live call against the replay) shows the graph computes what eager does
with them. What no proof can show is a read the key does not determine: that is the adapter's
contract, stated in its docstring for each read.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any, Iterator

import torch
from torch.overrides import TorchFunctionMode

#: The Python-level spellings of a device-to-host read.
READS = frozenset(
    {
        torch.Tensor.__float__,
        torch.Tensor.__int__,
        torch.Tensor.__bool__,
        torch.Tensor.__index__,
        torch.Tensor.item,
        torch.Tensor.tolist,
    }
)


class HostReadMismatch(RuntimeError):
    """A run read other values' kinds or shapes from the device than the recorded run."""


class HostReads(TorchFunctionMode):
    """Record the host reads of tensors on ``device_type`` in one run, return them in others."""

    def __init__(self, device_type: str = "cuda"):
        super().__init__()
        self.device_type = device_type
        #: ``(operation, shape, value)`` per read of the recorded run, in call order.
        self.values: list[tuple[str, tuple[int, ...], Any]] = []
        self._replaying = False
        self._next = 0

    @contextlib.contextmanager
    def recording(self) -> Iterator[HostReads]:
        """An eager run whose reads are performed and kept (the previous recording is dropped)."""
        self.values, self._replaying = [], False
        with self:
            yield self

    @contextlib.contextmanager
    def replaying(self) -> Iterator[HostReads]:
        """A run whose reads take the recorded values in order, without reading the device; it
        must take them all."""
        self._replaying, self._next = True, 0
        try:
            with self:
                yield self
        finally:
            self._replaying = False
        if self._next != len(self.values):
            raise HostReadMismatch(f"the run read {self._next} values on the host, the recorded run {len(self.values)}")

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        source = args[0] if args else None
        if func not in READS or not isinstance(source, torch.Tensor) or source.device.type != self.device_type:
            return func(*args, **kwargs)
        name, shape = func.__name__, tuple(source.shape)
        if not self._replaying:
            value = func(*args, **kwargs)
            self.values.append((name, shape, value))
            return value
        if self._next >= len(self.values):
            raise HostReadMismatch(f"the run read more values on the host than the recorded run ({len(self.values)})")
        recorded_name, recorded_shape, value = self.values[self._next]
        self._next += 1
        if (recorded_name, recorded_shape) != (name, shape):
            raise HostReadMismatch(
                f"host read {self._next} is {name} of {shape} in this run, "
                f"{recorded_name} of {recorded_shape} in the recorded run"
            )
        return copy.deepcopy(value)  # a .tolist() the caller may change
