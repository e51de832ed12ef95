"""Process-wide settings that pick a forward's kernels or their rounding, read as comparable values:
eager reads each at every call, a replay keeps what its capture ran, so they are part of the
fingerprint."""

from __future__ import annotations

import sys

import torch


def torch_math_flags() -> tuple:
    """torch's process-wide settings that pick kernels or their rounding: eager reads them at
    every call, a replay keeps the kernels chosen at capture."""
    cuda, cudnn = torch.backends.cuda, torch.backends.cudnn
    flags = [
        torch.get_float32_matmul_precision(),
        torch.are_deterministic_algorithms_enabled(),
        cuda.matmul.allow_tf32,
        cuda.matmul.allow_fp16_reduced_precision_reduction,
        cuda.matmul.allow_bf16_reduced_precision_reduction,
        cudnn.enabled,
        cudnn.allow_tf32,
        cudnn.benchmark,
        cudnn.deterministic,
    ]
    for name in ("flash_sdp_enabled", "mem_efficient_sdp_enabled", "math_sdp_enabled", "cudnn_sdp_enabled"):
        query = getattr(cuda, name, None)
        flags.append(query() if callable(query) else None)
    return tuple(flags)


def kernel_settings() -> tuple:
    """Process-wide settings besides :func:`torch_math_flags` that pick the forward's kernels or
    its code path: eager reads each at every call, a replay keeps what the capture ran.

    * torch: the preferred BLAS library (cuBLAS or cuBLASLt GEMMs), fp16 accumulation in matmuls
      (ComfyUI's ``--fast fp16_accumulation``), the math SDPA's reduced-precision reduction and
      SDPA's backend order;
    * ComfyUI: ``comfy.ops.SDPA_BACKEND_PRIORITY``, the order its attention applies with
      ``set_priority`` around every large SDPA call (a list other code edits in place: this
      pack's mode fast does, for its own captures only), and ``comfy.model_management.in_training``,
      under which LTX-2, Lumina 2 and other forwards take another normalisation path;
    * comfy-kitchen (ComfyUI's fused rope, norm and quantisation ops): its backend order, the
      backends disabled and this thread's override, which choose its cuda, triton or eager kernel.
    """
    cuda = torch.backends.cuda
    settings: list = []
    for read in (
        lambda: cuda.preferred_blas_library(),
        lambda: cuda.matmul.allow_fp16_accumulation,
        lambda: torch._C._get_math_sdp_allow_fp16_bf16_reduction(),
        lambda: tuple(torch._C._get_sdp_priority_order()),
    ):
        try:
            settings.append(str(read()))
        except Exception:  # a setting this torch does not have, or cannot read here: never a reason to fail a run
            settings.append(None)
    ops, management = sys.modules.get("comfy.ops"), sys.modules.get("comfy.model_management")
    order = getattr(ops, "SDPA_BACKEND_PRIORITY", None)
    settings.append(tuple(str(b) for b in order) if order is not None else None)
    settings.append(getattr(management, "in_training", None))
    registry = getattr(sys.modules.get("comfy_kitchen"), "registry", None)
    if registry is not None:
        local = getattr(registry, "_thread_local", None)
        settings.append(
            (
                tuple(getattr(registry, "_priority", ())),
                tuple(sorted(getattr(registry, "_disabled", ()))),
                getattr(local, "backend_override", None),
            )
        )
    return tuple(settings)
