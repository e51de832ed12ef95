"""core.dispatch_modes: under the capture's audit ``torch.Tensor(subclass_instance)`` is a plain
tensor over the same memory, as in eager (ComfyUI-GGUF drops its GGMLTensor class that way; under
a plain dispatch mode every GGUF capture failed with GGMLTensor.__init__'s TypeError)."""

import pytest
import torch

from bcg_runtime.core.outside_reads import OutsideReads

pytestmark = pytest.mark.unit


class KeywordTensor(torch.Tensor):
    """A plain subclass whose __init__ takes keyword-only arguments, like GGUF's GGMLTensor."""

    def __new__(cls, *args, tensor_type, **kwargs):
        return super().__new__(cls, *args, **kwargs)

    def __init__(self, *args, tensor_type, **kwargs):
        super().__init__()
        self.tensor_type = tensor_type


def weight():
    return KeywordTensor(torch.arange(6.0), tensor_type="F16")


def test_eager_returns_a_plain_tensor_over_the_same_memory():
    w = weight()
    plain = torch.Tensor(w)
    assert type(plain) is torch.Tensor and plain.data_ptr() == w.data_ptr()


def test_a_bare_dispatch_mode_breaks_the_constructor():
    from torch.utils._python_dispatch import TorchDispatchMode

    class Bare(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    w = weight()
    with Bare(), pytest.raises(TypeError, match="tensor_type"):
        torch.Tensor(w)


@pytest.mark.parametrize("first_op", [True, False], ids=["constructor-first", "after-an-op"])
def test_under_the_audit_the_constructor_is_eager_s(first_op):
    """The audit meets the class at the constructor's own alias, or at an earlier op."""
    w = weight()
    with OutsideReads("cpu"):
        if not first_op:
            w.to(torch.float16)
        plain = torch.Tensor(w)
        again = torch.Tensor(w)
    assert type(plain) is torch.Tensor and plain.data_ptr() == w.data_ptr()
    assert type(again) is torch.Tensor
    assert torch._C._len_torch_function_stack() == 0  # left with the dispatch mode


def test_a_forward_without_such_tensors_runs_under_no_function_mode():
    with OutsideReads("cpu") as audit:
        torch.ones(3) * 2
        assert torch._C._len_torch_function_stack() == 0
    assert audit._plain_alias is None
