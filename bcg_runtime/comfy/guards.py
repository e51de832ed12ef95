"""When graphs must not be used for a model, and how to tell that its weights moved.

A CUDA graph bakes in the addresses of every weight it reads. Anything that streams weights
(lowvram partial loads, Dynamic VRAM) or replaces weight tensors (reload, non-in-place LoRA) would
make a replay read freed or stale memory: a wrong picture with no error. Each check returns a
reason with the fix, or None.
"""

from __future__ import annotations

import sys
from typing import Any

import torch


def device_refusal(model_patcher: Any) -> str | None:
    device = getattr(model_patcher, "load_device", None)
    if getattr(device, "type", None) != "cuda":
        return f"no CUDA: ComfyUI runs this model on {device}; graphs need an NVIDIA GPU, the model runs unchanged"
    return None


def allocator_refusal() -> str | None:
    """The refusal when PyTorch runs cudaMallocAsync, else None.

    That allocator has no private memory pools or snapshots, so graph memory could be neither kept
    apart, measured nor budgeted, and a failed capture aborts the process. The pack's prestartup
    script switches ComfyUI off it before torch loads, so this is the fallback for a process that
    skipped that switch; the message names those causes and the fix. The backend is fixed when CUDA
    starts, so the answer holds for the whole process."""
    if torch.cuda.is_available() and torch.cuda.get_allocator_backend() == "cudaMallocAsync":
        from ..allocator_env import OPT_OUT_VAR

        return (
            "PyTorch runs the cudaMallocAsync allocator, which has no private graph pools; the pack's "
            "prestartup script switches it off before torch loads, so this process skipped it (started with "
            "--disable-all-custom-nodes, a launcher or another pack's prestartup script that imports torch "
            f"first, or {OPT_OUT_VAR}=1 set): restart ComfyUI without those, or with --disable-cuda-malloc; "
            "the model runs unchanged"
        )
    return None


#: Why a Dynamic VRAM forward cannot be graphed, and the fix; for the sampled patcher (checked per
#: run) and for a DiT call that says it streams (``prefetch_dynamic_vbars``, see options.py).
DYNAMIC_VRAM_REFUSAL = (
    "Dynamic VRAM streams this model's weights in during the forward: they have no fixed address; "
    "sample the output of BCG Apply (it gives the model a resident copy) or start ComfyUI with --disable-dynamic-vram"
)


def dynamic_vram_refusal(model_patcher: Any) -> str | None:
    is_dynamic = getattr(model_patcher, "is_dynamic", None)
    return DYNAMIC_VRAM_REFUSAL if callable(is_dynamic) and is_dynamic() else None


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


def compile_refusal(model_patcher: Any) -> str | None:
    """TorchCompileModel (core's ``set_torch_compile_wrapper``) on this model: its compiled forward
    replaces the DiT inside the APPLY_MODEL wrapper. With backend "cudagraphs" it already replays
    graphs (one graph of graphs is enough); with any backend the forward BCG would capture is
    dynamo's, whose guards and recompiles a replay would skip. BCG steps aside, saying which; also
    where another node replaced the DiT with a torch.compile'd module."""
    kwargs = getattr(model_patcher, "model_options", {}).get("torch_compile_kwargs")
    if not kwargs:
        from torch._dynamo.eval_frame import OptimizedModule

        if isinstance(model_patcher.get_model_object("diffusion_model"), OptimizedModule):  # this clone's, loaded or not
            return "the diffusion model is a torch.compile'd module (another node compiled it): BCG steps aside and it runs as it would without BCG"
        return None
    backend = kwargs.get("backend")
    backend = backend if isinstance(backend, str) else getattr(backend, "__name__", "custom")
    if backend == "cudagraphs":
        return "TorchCompileModel (backend cudagraphs) already replays this model as CUDA graphs: BCG steps aside"
    return (
        f"TorchCompileModel (backend {backend}) compiles this model: BCG steps aside and the compiled model runs as it would "
        "without BCG (for compiled kernels under graphs, use BCG Apply mode 'fast' without TorchCompileModel)"
    )


def core_graph_refusal(model_patcher: Any) -> str | None:
    """ComfyUI's own per-layer CUDA graphs (``comfy/model_prefetch.py``, Dynamic VRAM) on this
    model's DiT: graphing a forward whose layers replay graphs would capture graphs in a graph."""
    dm = getattr(getattr(model_patcher, "model", None), "diffusion_model", None)
    modules = dm.modules() if hasattr(dm, "modules") else ()
    if any(getattr(m, "_comfy_graph", None) is not None for m in modules):
        return "ComfyUI already runs this model's layers as CUDA graphs (Dynamic VRAM prefetch): BCG steps aside"
    return None


def run_refusal(model_patcher: Any) -> str | None:
    """Why graphs cannot serve this sampling run, or None; checked at the start of every run."""
    for refusal in (dynamic_vram_refusal, lowvram_refusal, compile_refusal, core_graph_refusal):
        reason = refusal(model_patcher)
        if reason:
            return reason
    return None


class AddressState:
    """Everything a DiT graph reads by address or freezes from Python, for one model right now.

    ``token`` holds, for the diffusion model: every parameter's, buffer's and plain tensor
    attribute's address, dtype and shape (a reload, an offload, a non-in-place LoRA or
    ``param.data = other`` change it); the object patches ComfyUI applies to it (NegPiP patches
    Flux's ``forward_orig`` this way); and the attention functions bound in ComfyUI's model
    modules (FLUX binds its own copy of ``optimized_attention``, so a swap of the generic one
    says nothing about FLUX's). Objects are keyed by identity and kept alive in ``keep``, so an
    id can never be reused by another object while an entry holds this state.

    Equal tokens mean a graph captured under one may serve the other; the runner compares the
    state of every call with the state of the entry (see ``GraphRunner``).
    """

    __slots__ = ("token", "keep", "_hash")

    def __init__(self, weights: tuple, patches: tuple, attention: tuple, keep: list):
        self.token = (weights, patches, attention)
        self.keep = keep
        self._hash = hash(self.token)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return isinstance(other, AddressState) and self._hash == other._hash and self.token == other.token

    def __hash__(self) -> int:
        return self._hash

    def change_from(self, old: "AddressState") -> str:
        """What differs from ``old``, in words a user can act on."""
        what = [
            name
            for name, a, b in zip(("weights moved", "object patches changed", "attention function swapped"), old.token, self.token)
            if a != b
        ]
        return ", ".join(what) or "nothing"


def _address(t: torch.Tensor) -> tuple:
    """Where a weight's data lives: its address, dtype and shape; for a tensor subclass that
    stores its data in inner tensors (ComfyUI's quantized weights: fp8/nvfp4 data plus scales,
    all read by a graph) the addresses of every inner tensor."""
    flatten = getattr(t, "__tensor_flatten__", None)
    if callable(flatten):
        names, _ = flatten()
        return (type(t).__name__, tuple(sorted((name, _address(getattr(t, name))) for name in names)))
    return (t.data_ptr(), t.dtype, tuple(t.shape))


_LDM_NAMES: tuple[int, list[str]] = (-1, [])


def _ldm_modules() -> list[tuple[str, Any]]:
    """ComfyUI's model modules (``comfy.ldm.*``) now imported. Taken at every run: a ComfyUI
    process holds thousands of modules, so the names are rescanned only when that number changes;
    the module objects are looked up by name each time, so a module replaced in ``sys.modules``
    is the one read."""
    global _LDM_NAMES
    count = len(sys.modules)
    if _LDM_NAMES[0] != count:
        _LDM_NAMES = (count, [n for n in list(sys.modules) if n.startswith("comfy.ldm.")])
    modules = ((n, sys.modules.get(n)) for n in _LDM_NAMES[1])
    return [(n, m) for n, m in modules if m is not None]


def address_state(model_patcher: Any, scratch: tuple[str, ...] = ()) -> AddressState:
    """The :class:`AddressState` of ``model_patcher``'s diffusion model as it is now; ``scratch``:
    attributes of the top-level module that its forward writes and never reads (the adapter's
    ``forward_scratch_attributes``), left out."""
    diffusion_model = model_patcher.model.diffusion_model
    weights = []
    for module in diffusion_model.modules():
        for tensors in (module._parameters, module._buffers):
            for t in tensors.values():
                if t is not None:
                    weights.append(_address(t))
        for name, value in module.__dict__.items():  # tensors kept as plain attributes (tables, pads)
            if module is diffusion_model and name in scratch:
                continue
            if isinstance(value, torch.Tensor):
                weights.append(_address(value))
    keep: list = []
    patches = []
    for name, obj in sorted(getattr(model_patcher, "object_patches", {}).items()):
        if name.startswith("diffusion_model"):
            patches.append((name, id(obj)))
            keep.append(obj)
    attention = []
    for module_name, module in _ldm_modules():
        for attr, fn in list(vars(module).items()):
            if attr.startswith("optimized_attention") and callable(fn):
                attention.append((module_name, attr, id(fn)))
                keep.append(fn)
    attention.sort()
    return AddressState(tuple(weights), tuple(patches), tuple(attention), keep)


def inplace_lora_refusal(diffusion_model: Any) -> str | None:
    """Why LoRA cannot be patched into the existing weight tensors of this model, or None.

    ComfyUI's quantized and mixed-precision layers (``comfy_quant`` checkpoints, converted
    ``scaled_fp8`` files) re-quantize a patched weight through their ``set_weight`` and assert it
    is not in place. For those BCG leaves ``weight_inplace_update`` alone: a LoRA then replaces
    weights, the address state changes, and graphs are dropped and captured again.
    """
    for name, module in diffusion_model.named_modules():
        if any(callable(getattr(module, f"set_{p}", None)) for p in module._parameters):
            return f"quantized or mixed-precision layers ({name or 'root'}) patch weights out of place"
    return None
