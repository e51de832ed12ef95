"""guards.host_memory_writable: BCG asks for in-place LoRA only where the weights' host memory is
a writable mapping (a GGUF file is memory-mapped read-only; writing into it killed the process)."""

import sys
import warnings

import numpy as np
import pytest
import torch

from bcg_runtime.comfy.guards import host_memory_writable

pytestmark = pytest.mark.unit


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps (Linux)")
def test_ordinary_and_copy_on_write_memory_is_writable_and_a_read_only_map_is_not(tmp_path):
    path = tmp_path / "weights.bin"
    torch.randn(256, 256).numpy().tofile(path)
    private = torch.from_numpy(np.memmap(path, dtype=np.float32, mode="c"))  # copy-on-write, as torch's mmap loads
    # torch warns that the array is not writable, once per process (GGUF's loader meets it too).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        read_only = torch.from_numpy(np.memmap(path, dtype=np.float32, mode="r"))
    assert host_memory_writable([torch.zeros(1000), private])
    assert not host_memory_writable([read_only])
    assert not host_memory_writable([torch.zeros(10), read_only])
