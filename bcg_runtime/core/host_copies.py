"""Host-to-device copies of pageable CPU tensors, made capturable by staging them in pinned memory.

Some forwards build a small constant on the host and copy it to the GPU on every call: Wan's
``torch.arange(half).to(position)``, LTX-Video's ``torch.tensor(patch_size, device=...)``. A copy
from pageable memory is synchronous, and CUDA graph capture refuses it ("operation not permitted
when stream is capturing"), so without help every capture of such a model fails.

:class:`HostCopyStaging` is a ``TorchFunctionMode`` that rewrites those copies into an
asynchronous copy from a pinned buffer, which a graph can hold: the buffer is the copy's source at
every replay, so it must stay allocated and unchanged for the graph's life (the runner's entry
holds :attr:`HostCopyStaging.buffers`). Buffers are made outside the capture (allocating pinned
memory while a stream captures can query events, which capture also refuses): the last eager
warm-up run *records* (a buffer per copy, in call order), the capture *replays* the recorded list,
each copy taking the next buffer of the same shape and dtype, and a forward whose copies differ
between the two raises :class:`HostCopyMismatch` (the capture fails, the shape runs eager).

What this freezes, and why it is still exact: the value copied at capture is what every replay
copies. A host value can come only from Python numbers and shapes (reading a device value on the
host is a sync, which capture refuses by itself, unless the runner replays recorded reads,
:mod:`.host_reads`, whose values the call's key determines); shapes are in the call's key, and the runner's
proof replays on other floating-point inputs than the capture's, so a copied value that depended
on anything that changes between calls shows up as a difference and the graph is never stored.
A model opts in through its adapter, which names the copies it makes and why they are constant.

Only the Python-level spellings are seen: ``Tensor.to``, ``Tensor.cuda``, ``Tensor.type_as``
(Wan Animate's host ``zeros(...).type_as(x)``), ``Tensor.copy_``, ``torch.tensor`` /
``torch.as_tensor`` of host data with a device, and ``Tensor.__setitem__`` of a Python number
into one element of a device tensor (WanDancer's ``positions_new[-1] = ...``): PyTorch wraps the
number in a pageable CPU tensor and, where the indexed view is 0-dim like it, copies it, so that
case is staged as a 0-dim buffer. Where PyTorch copies nothing it is left alone: a wider view is
filled with the number, and an advanced index keeps PyTorch's own path (a boolean mask's
``masked_fill_``, which needs the number on the host; Ideogram 4's text mask). A Python number written that way is as constant as one folded into a kernel's arguments
(``x * 0.5``), which a graph freezes the same way; it is converted to the target's dtype on the
host, as PyTorch converts it. A copy made inside an operator (in C++) is not seen, and still fails
the capture, with its reason.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import torch
from torch.overrides import TorchFunctionMode


def _is_basic(index: Any) -> bool:
    """Whether ``tensor[index]`` is basic indexing (ints, slices, ``None``, ``...``): a view."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(
        isinstance(part, (int, slice, type(None), type(Ellipsis))) and not isinstance(part, bool) for part in parts
    )


class HostCopyMismatch(RuntimeError):
    """The capture made other host-to-device copies than the warm-up run it follows."""


class HostCopyStaging(TorchFunctionMode):
    """Route host-to-device copies to ``device_type`` through recorded pinned buffers.

    Use :meth:`recording` around an eager run, then :meth:`replaying` around the capture of the
    same call. ``pin=False`` keeps the buffers pageable: for tests on devices with no pinned
    memory (CPU-only builds), where the copy path, not its asynchrony, is under test.
    """

    def __init__(self, device_type: str = "cuda", pin: bool = True):
        super().__init__()
        self.device_type = device_type
        self.pin = pin
        #: The buffers of the last recorded run, in call order: the graph's copy sources.
        self.buffers: list[torch.Tensor] = []
        self._replaying = False
        self._next = 0

    @contextlib.contextmanager
    def recording(self) -> Iterator[HostCopyStaging]:
        """An eager run whose copies each get a new buffer (the previous recording is dropped)."""
        self.buffers, self._replaying = [], False
        with self:
            yield self

    @contextlib.contextmanager
    def replaying(self) -> Iterator[HostCopyStaging]:
        """A capture whose copies take the recorded buffers in order; all must be taken."""
        self._replaying, self._next = True, 0
        with self:
            yield self
        if self._next != len(self.buffers):
            raise HostCopyMismatch(
                f"the capture made {self._next} host-to-device copies, its warm-up run {len(self.buffers)}"
            )

    # ------------------------------------------------------------------ interception
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.to:
            return self._to(func, args, kwargs)
        if func is torch.Tensor.cuda:
            return self._cuda(func, args, kwargs)
        if func is torch.Tensor.type_as:
            return self._type_as(func, args, kwargs)
        if func is torch.Tensor.__setitem__:
            return self._setitem(func, args, kwargs)
        if func is torch.Tensor.copy_:
            return self._copy_(func, args, kwargs)
        if func is torch.tensor or func is torch.as_tensor:
            return self._factory(func, args, kwargs)
        return func(*args, **kwargs)

    def _to(self, func, args: tuple, kwargs: dict) -> Any:
        source = args[0]
        # ``copy`` (ComfyUI's ``cast_to`` passes it) is refused by the parser; a staged copy is a
        # new device tensor whatever it says, and any other call gets its arguments unchanged.
        parsed = {k: v for k, v in kwargs.items() if k != "copy"}
        positional = args[1:4] if len(args) > 4 else args[1:]  # to(device, dtype, non_blocking, copy)
        device, dtype, _, memory_format = torch._C._nn._parse_to(*positional, **parsed)
        if not self._is_host_to_device(source, device):
            return func(*args, **kwargs)
        extra = {} if memory_format is None else {"memory_format": memory_format}
        return self._staged_copy(source, device, dtype, **extra)

    def _cuda(self, func, args: tuple, kwargs: dict) -> Any:
        source = args[0]
        device = args[1] if len(args) > 1 else kwargs.get("device")
        device = (
            torch.device("cuda")
            if device is None
            else torch.device("cuda", device)
            if isinstance(device, int)
            else torch.device(device)
        )
        if not self._is_host_to_device(source, device):
            return func(*args, **kwargs)
        return self._staged_copy(source, device)

    def _type_as(self, func, args: tuple, kwargs: dict) -> Any:
        source, other = args[0], args[1] if len(args) > 1 else kwargs["other"]
        if not (isinstance(other, torch.Tensor) and self._is_host_to_device(source, other.device)):
            return func(*args, **kwargs)
        return self._staged_copy(source, other.device, other.dtype)

    def _setitem(self, func, args: tuple, kwargs: dict) -> Any:
        target, index, value = args
        number = isinstance(value, (bool, int, float, complex))
        if not (
            number and isinstance(target, torch.Tensor) and target.device.type == self.device_type and _is_basic(index)
        ):
            return func(*args, **kwargs)
        element = target[index]  # basic indexing: a view, no copy
        if element.dim() != 0:  # PyTorch fills a wider view with the number: no copy to stage
            return func(*args, **kwargs)
        host = torch.tensor(value, dtype=target.dtype)  # the number as PyTorch's own wrapper holds it
        element.copy_(self._stage(host), non_blocking=True)
        return None

    def _copy_(self, func, args: tuple, kwargs: dict) -> Any:
        target, source = args[0], args[1] if len(args) > 1 else kwargs["src"]
        if not (isinstance(target, torch.Tensor) and self._is_host_to_device(source, target.device)):
            return func(*args, **kwargs)
        # Shaped and typed like the target on the host: a cross-device copy_ that broadcasts or
        # converts makes a pageable temporary first, which capture refuses again.
        host = source.to(dtype=target.dtype).expand(target.shape)
        return target.copy_(self._stage(host), non_blocking=True)

    def _factory(self, func, args: tuple, kwargs: dict) -> Any:
        device = kwargs.get("device")
        data = args[0] if args else kwargs.get("data")
        if device is None or isinstance(data, torch.Tensor) or torch.device(device).type != self.device_type:
            return func(*args, **kwargs)
        host = func(*args, **{**kwargs, "device": "cpu"})
        return self._staged_copy(host, device)

    # ------------------------------------------------------------------ staging
    def _is_host_to_device(self, source: Any, device: torch.device | None) -> bool:
        return (
            isinstance(source, torch.Tensor)
            and device is not None
            and torch.device(device).type == self.device_type
            and source.device.type == "cpu"
            and not (self.pin and source.is_pinned())
        )

    def _staged_copy(
        self, source: torch.Tensor, device: Any, dtype: torch.dtype | None = None, **to_kwargs
    ) -> torch.Tensor:
        """``source`` on ``device`` (converted to ``dtype``), copied asynchronously from its buffer."""
        return self._stage(source, dtype).to(device=device, non_blocking=True, **to_kwargs)

    def _stage(self, source: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
        """The buffer this copy reads from, holding ``source``'s values converted to ``dtype``.

        The conversion happens here, on the host, as eager's pageable copy does it (a
        cross-device copy that converts makes a host temporary, which would be pageable again)."""
        if dtype is not None and dtype != source.dtype:
            source = source.to(dtype)
        if not self._replaying:
            buffer = torch.empty_like(
                source, pin_memory=self.pin
            )  # strides kept where dense, as eager's copy keeps them
            self.buffers.append(buffer)
        else:
            if self._next >= len(self.buffers):
                raise HostCopyMismatch(
                    f"the capture made more host-to-device copies than its warm-up run ({len(self.buffers)})"
                )
            buffer = self.buffers[self._next]
            self._next += 1
            if buffer.shape != source.shape or buffer.dtype != source.dtype:
                raise HostCopyMismatch(
                    f"host-to-device copy {self._next} is {tuple(source.shape)} {source.dtype} in the capture, "
                    f"{tuple(buffer.shape)} {buffer.dtype} in its warm-up run"
                )
        return buffer.copy_(source)
