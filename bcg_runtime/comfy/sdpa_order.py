"""The order in which PyTorch's SDPA tries its attention kernels, as ComfyUI sets it.

ComfyUI's own SDPA call on CUDA (``comfy.ops.scaled_dot_product_attention``) wraps every large
attention in ``sdpa_kernel(comfy.ops.SDPA_BACKEND_PRIORITY, set_priority=True)``, flash first, which
overrides any order set around it: so :func:`cudnn_first` changes that list in place. Inductor reads
the order when it traces, so blocks compiled under it get the cuDNN kernel too.

Why: on Hopper cuDNN's attention is faster than flash's (docs/benchmarks.md, "Figures the design
rests on"). It is another kernel, so not bit-equal to the default: only mode fast (already not
bit-exact) uses it, and the benchmark's ``cudnn`` stack.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch

#: cuDNN's fused attention ships Hopper kernels (sm 9.0); the H200 is where the gain was measured,
#: and newer GPUs get newer cuDNN kernels. Before Hopper flash stays first (not measured there).
CUDNN_MIN_CAPABILITY = (9, 0)


def cudnn_attention_preferred(device: torch.device) -> bool:
    """Whether mode fast puts cuDNN's attention first when it captures on ``device``."""
    if device.type != "cuda" or torch.version.hip or not torch.backends.cudnn.is_available():
        return False  # ROCm reports its GPUs as "cuda" and has no cuDNN attention
    return torch.cuda.get_device_capability(device) >= CUDNN_MIN_CAPABILITY


@contextlib.contextmanager
def cudnn_first() -> Iterator[None]:
    """SDPA tries cuDNN's attention first (then flash, memory-efficient, math) for the duration;
    ComfyUI's list is restored after. Where ComfyUI has no such list (no CUDA at its import) the
    order is set around the duration instead."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    order = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
    import comfy.ops

    comfy_order = getattr(comfy.ops, "SDPA_BACKEND_PRIORITY", None)
    if comfy_order is None:
        with sdpa_kernel(order, set_priority=True):
            yield
        return
    before = list(comfy_order)
    comfy_order[:] = order
    try:
        yield
    finally:
        comfy_order[:] = before
