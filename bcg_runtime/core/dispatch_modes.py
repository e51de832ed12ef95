"""A ``TorchDispatchMode`` base that leaves eager's tensor types as they are.

While any dispatch mode is active, PyTorch's legacy constructor ``torch.Tensor(t)`` of a tensor
subclass instance routes its ``aten.alias`` through ``__torch_function__``, so the result comes
back as the subclass, and Python then calls the subclass's ``__init__`` with the constructor's
arguments. Without a mode the same call returns a plain ``torch.Tensor`` sharing ``t``'s memory.
ComfyUI-GGUF calls ``torch.Tensor(weight)`` on every unquantized weight to drop its
``GGMLTensor`` class, whose ``__init__`` takes keyword-only arguments, so under a plain mode every
GGUF forward raised ``TypeError`` and no GGUF model could be captured.

:class:`TypePreservingDispatchMode` enters, with itself, a ``TorchFunctionMode`` that answers that
one alias as eager does: computed with subclass ``__torch_function__`` off, a plain tensor over
the same memory. Every other function passes through unchanged. An explicit
``torch.ops.aten.alias.default`` call on a subclass also comes back plain under the mode, where
eager keeps the subclass; no DiT forward makes one (ComfyUI's and its packs' model code calls
``alias`` only through the legacy constructor).
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
    """A dispatch mode under which ``torch.Tensor(subclass_instance)`` is what it is in eager."""

    def __enter__(self):
        entered = super().__enter__()
        self._plain_alias = _PlainLegacyAlias()
        self._plain_alias.__enter__()
        return entered

    def __exit__(self, exc_type, exc_value, traceback):
        try:
            self._plain_alias.__exit__(exc_type, exc_value, traceback)
        finally:
            super().__exit__(exc_type, exc_value, traceback)
