"""When graphs must not be used for a model, and how to tell that its weights moved.

A CUDA graph bakes in the addresses of every weight it reads. Anything that streams weights
(lowvram partial loads, Dynamic VRAM) or replaces weight tensors (reload, non-in-place LoRA) would
make a replay read freed or stale memory: a wrong picture with no error. Each check returns a
reason with the fix, or None.
"""

from __future__ import annotations

from typing import Any

import torch


def device_refusal(model_patcher: Any) -> str | None:
    device = getattr(model_patcher, "load_device", None)
    if getattr(device, "type", None) != "cuda":
        return f"no CUDA: ComfyUI runs this model on {device}; graphs need an NVIDIA GPU, the model runs unchanged"
    return None


def allocator_refusal() -> str | None:
    """cudaMallocAsync, which ComfyUI turns on by default for NVIDIA GPUs, has no private memory
    pools or snapshots: graph memory could be neither kept apart, measured nor budgeted. The
    backend is fixed when CUDA starts, so this holds for the whole process."""
    if torch.cuda.is_available() and torch.cuda.get_allocator_backend() == "cudaMallocAsync":
        return (
            "PyTorch runs the cudaMallocAsync allocator (ComfyUI's default on NVIDIA), which has no "
            "private graph pools; start ComfyUI with --disable-cuda-malloc to use BCG, the model runs unchanged"
        )
    return None


def dynamic_vram_refusal(model_patcher: Any) -> str | None:
    is_dynamic = getattr(model_patcher, "is_dynamic", None)
    if callable(is_dynamic) and is_dynamic():
        return (
            "Dynamic VRAM streams weights every forward; start ComfyUI with --disable-dynamic-vram "
            "(or --highvram) to use BCG"
        )
    return None


def lowvram_refusal(model_patcher: Any) -> str | None:
    model = model_patcher.model
    partial = getattr(model, "model_lowvram", False) or getattr(model, "lowvram_patch_counter", 0) > 0
    if not partial:
        try:
            partial = model_patcher.loaded_size() < model_patcher.model_size()
        except Exception:  # sizes are a second opinion; the flags above are authoritative
            partial = False
    if partial:
        return (
            "lowvram: the model is only partly on the GPU, so weights stream every forward; free VRAM "
            "(unload other models, lower the BCG memory budget) or start ComfyUI with --highvram"
        )
    return None


def run_refusal(model_patcher: Any) -> str | None:
    """The first reason graphs cannot serve this model right now, or None."""
    return device_refusal(model_patcher) or dynamic_vram_refusal(model_patcher) or lowvram_refusal(model_patcher)


def weight_fingerprint(diffusion_model: Any) -> tuple:
    """Addresses of every parameter and buffer: equal exactly when no weight tensor was replaced.

    In-place updates (LoRA with ``weight_inplace_update``) keep the fingerprint, and graphs then
    read the new values, which is correct.
    """
    params = tuple((p.data_ptr(), p.dtype, p.device.index) for p in diffusion_model.parameters())
    buffers = tuple((b.data_ptr(), b.dtype) for b in diffusion_model.buffers())
    return params + buffers
