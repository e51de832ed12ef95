"""A ``TorchDispatchMode`` base that leaves eager's tensor types as they are.

While any dispatch mode is active, PyTorch's legacy constructor ``torch.Tensor(t)`` of a tensor
subclass instance routes its ``aten.alias`` through ``__torch_function__``, so the result comes
back as the subclass, and Python then calls the subclass's ``__init__`` with the constructor's
arguments. Without a mode the same call returns a plain ``torch.Tensor`` sharing ``t``'s memory.
ComfyUI-GGUF calls ``torch.Tensor(weight)`` on every unquantized weight to drop its
``GGMLTensor`` class, whose ``__init__`` takes keyword-only arguments, so under a plain mode every
GGUF forward raised ``TypeError`` and no GGUF model could be captured.

:class:`TypePreservingDispatchMode` enters, once an op of the run meets such a subclass, a
``TorchFunctionMode`` that answers that one alias as eager does: computed with subclass
``__torch_function__`` off, a plain tensor over the same memory. Every other function passes
through unchanged. An explicit ``torch.ops.aten.alias.default`` call on a subclass also comes back
plain under the mode, where eager keeps the subclass; no DiT forward makes one (ComfyUI's and its
packs' model code calls ``alias`` only through the legacy constructor). The alias of the
constructor itself reaches the dispatch mode before its result is converted, so even a forward
whose first op on such a tensor is the constructor meets the class in time
(``tests/unit/test_dispatch_modes.py``).
"""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

_ALIAS = torch.ops.aten.alias.default


class _PlainLegacyAlias(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is _ALIAS and args and type(args[0]) is not torch.Tensor:
            with torch._C.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        return func(*args, **kwargs)


class TypePreservingDispatchMode(TorchDispatchMode):
    """A dispatch mode under which ``torch.Tensor(subclass_instance)`` is what it is in eager.

    The plain-alias function mode is entered the first time an op of the run meets a plain tensor
    subclass (one without its own ``__torch_dispatch__``, such as ``GGMLTensor``), and left with
    this mode: any function mode changes how PyTorch builds some tensors (``torch.tensor`` on CUDA
    then dispatches its ``fill_`` to the mode), so a forward without such weights runs under this
    dispatch mode alone. Subclasses call :meth:`meet` with each op's arguments."""

    def __enter__(self):
        self._plain_alias = None
        return super().__enter__()

    def meet(self, tensors) -> None:
        """Enter the plain-alias function mode if ``tensors`` holds a plain tensor subclass."""
        if self._plain_alias is not None:
            return
        for t in tensors:
            if is_plain_subclass(t):
                self._plain_alias = _PlainLegacyAlias()
                self._plain_alias.__enter__()
                return

    def __exit__(self, exc_type, exc_value, traceback):
        try:
            if self._plain_alias is not None:
                self._plain_alias.__exit__(exc_type, exc_value, traceback)
                self._plain_alias = None
        finally:
            super().__exit__(exc_type, exc_value, traceback)


def is_plain_subclass(t: torch.Tensor) -> bool:
    """Whether ``t`` is of a tensor subclass that keeps the default ``__torch_dispatch__``: its data
    is its own storage and its Python code runs on top (ComfyUI-GGUF's ``GGMLTensor``), unlike
    ``torch.nn.Parameter`` and unlike a wrapper subclass with its own dispatch and inner tensors
    (ComfyUI's quantized weights)."""
    cls = type(t)
    return (
        cls is not torch.Tensor
        and cls is not torch.nn.Parameter
        and getattr(cls, "__torch_dispatch__", None) is torch.Tensor.__torch_dispatch__
    )
