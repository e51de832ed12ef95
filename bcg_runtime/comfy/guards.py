"""When graphs must not be used for a model, and how to tell that its weights moved.

A CUDA graph bakes in the addresses of every weight it reads. Anything that streams weights
(lowvram partial loads, Dynamic VRAM) or replaces weight tensors (reload, non-in-place LoRA) would
make a replay read freed or stale memory: a wrong picture with no error. Each check returns a
:class:`~bcg_runtime.core.reasons.Reason` with the fix (kind ``disabled``, or ``compiled`` where a
compiled forward serves), or None.
"""

from __future__ import annotations

import bisect
import sys
from typing import Any

import torch

from ..core.dispatch_modes import is_plain_subclass
from ..core.reasons import Kind, Reason


def _off(text: str) -> Reason:
    """A refusal that leaves the model or the process without graphs (kind ``disabled``)."""
    return Reason(Kind.DISABLED, text)


def process_refusal() -> Reason | None:
    """Why BCG can serve no model in this whole process, or None: ComfyUI runs on the CPU
    (``--cpu``) or on another device than CUDA, PyTorch sees no CUDA GPU, or PyTorch runs the
    cudaMallocAsync allocator (:func:`allocator_refusal`). Each is fixed once ComfyUI has started,
    so the pack says it once at start-up (``startup.py``) and every model's session carries it."""
    args = getattr(sys.modules.get("comfy.cli_args"), "args", None)
    if getattr(args, "cpu", False):
        return _off("no CUDA: ComfyUI runs with --cpu; graphs need an NVIDIA GPU, models run unchanged")
    if not torch.cuda.is_available():
        return _off(
            f"no CUDA: PyTorch {torch.__version__} sees no CUDA GPU; graphs need an NVIDIA GPU, models run unchanged"
        )
    mm = sys.modules.get("comfy.model_management")
    try:
        device = mm.get_torch_device() if mm is not None else None
    except Exception:  # ComfyUI could not pick a device: nothing to say beyond the per-model check
        device = None
    if device is not None and getattr(device, "type", None) != "cuda":
        return _off(f"no CUDA: ComfyUI runs on {device}; graphs need an NVIDIA GPU, models run unchanged")
    return allocator_refusal()


def device_refusal(model_patcher: Any) -> Reason | None:
    device = getattr(model_patcher, "load_device", None)
    if getattr(device, "type", None) != "cuda":
        return _off(
            f"no CUDA: ComfyUI runs this model on {device}; graphs need an NVIDIA GPU, the model runs unchanged"
        )
    return None


def allocator_refusal() -> Reason | None:
    """The refusal when PyTorch runs cudaMallocAsync, else None.

    That allocator has no private memory pools or snapshots, so graph memory could be neither kept
    apart, measured nor budgeted, and a failed capture aborts the process. The pack's prestartup
    script switches ComfyUI off it before torch loads, so this is the fallback for a process that
    skipped that switch; the message names those causes and the fix. The backend is fixed when CUDA
    starts, so the answer holds for the whole process."""
    if torch.cuda.is_available() and torch.cuda.get_allocator_backend() == "cudaMallocAsync":
        from ..allocator_env import OPT_OUT_VAR

        return _off(
            "PyTorch runs the cudaMallocAsync allocator, which has no private graph pools; the pack's "
            "prestartup script switches it off before torch loads, so this process skipped it (started with "
            "--disable-all-custom-nodes, a launcher or another pack's prestartup script that imports torch "
            f"first, a custom-node policy that refused this pack's prestartup, or {OPT_OUT_VAR}=1 set): restart "
            "ComfyUI without those, or with --disable-cuda-malloc; "
            "the model runs unchanged"
        )
    return None


#: Why a Dynamic VRAM forward cannot be graphed, and the fix; for the sampled patcher (checked per
#: run) and for a DiT call that says it streams (``prefetch_dynamic_vbars``, see options.py).
DYNAMIC_VRAM_REFUSAL = Reason(
    Kind.DISABLED,
    "Dynamic VRAM streams this model's weights in during the forward: they have no fixed address; "
    "sample the output of BCG Apply (it gives the model a resident copy) or start ComfyUI with --disable-dynamic-vram",
)


def dynamic_vram_refusal(model_patcher: Any) -> Reason | None:
    is_dynamic = getattr(model_patcher, "is_dynamic", None)
    return DYNAMIC_VRAM_REFUSAL if callable(is_dynamic) and is_dynamic() else None


def lowvram_refusal(model_patcher: Any) -> Reason | None:
    model = model_patcher.model
    partial = getattr(model, "model_lowvram", False) or getattr(model, "lowvram_patch_counter", 0) > 0
    if not partial:
        try:
            partial = model_patcher.loaded_size() < model_patcher.model_size()
        except Exception:  # sizes are a second opinion; the flags above are authoritative
            partial = False
    if partial:
        return _off(
            "lowvram: the model is only partly on the GPU, so weights stream every forward; free VRAM "
            "(unload other models, lower the BCG memory budget) or start ComfyUI with --highvram"
        )
    return None


def compile_refusal(model_patcher: Any) -> Reason | None:
    """TorchCompileModel (core's ``set_torch_compile_wrapper``) on this model: its compiled forward
    replaces the DiT inside the APPLY_MODEL wrapper. With backend "cudagraphs" it already replays
    graphs (one graph of graphs is enough); with any backend the forward BCG would capture is
    dynamo's, whose guards and recompiles a replay would skip. BCG steps aside, saying which; also
    where another node replaced the DiT with a torch.compile'd module."""
    kwargs = getattr(model_patcher, "model_options", {}).get("torch_compile_kwargs")
    if not kwargs:
        from torch._dynamo.eval_frame import OptimizedModule

        if isinstance(
            model_patcher.get_model_object("diffusion_model"), OptimizedModule
        ):  # this clone's, loaded or not
            return Reason(
                Kind.COMPILED,
                "the diffusion model is a torch.compile'd module (another node compiled it): BCG steps aside and it "
                "runs as it would without BCG",
            )
        return None
    backend = kwargs.get("backend")
    backend = backend if isinstance(backend, str) else getattr(backend, "__name__", "custom")
    if backend == "cudagraphs":
        return Reason(
            Kind.COMPILED,
            "TorchCompileModel (backend cudagraphs) already replays this model as CUDA graphs: BCG steps aside",
        )
    return Reason(
        Kind.COMPILED,
        f"TorchCompileModel (backend {backend}) compiles this model: BCG steps aside and the compiled model runs as it would "
        "without BCG (for compiled kernels under graphs, use BCG Apply mode 'fast' without TorchCompileModel)",
    )


def run_refusal(model_patcher: Any) -> Reason | None:
    """Why graphs cannot serve this sampling run, or None; checked at the start of every run.
    (ComfyUI's own per-module CUDA graphs are in the model's fingerprint: ``fingerprint.py``.)"""
    for refusal in (dynamic_vram_refusal, lowvram_refusal, compile_refusal):
        reason = refusal(model_patcher)
        if reason:
            return reason
    return None


def inplace_lora_refusal(model_patcher: Any, diffusion_model: Any) -> str | None:
    """Why BCG may not have LoRA patched into the existing weight tensors of this model, or None.

    In place (``weight_inplace_update``) keeps every weight's address, so graphs stay valid across a
    LoRA change; it writes into the weights' memory, so BCG asks for it only where it can prove
    that write is ComfyUI's own into ordinary writable memory. Refused:

    * a patcher with its own ``patch_weight_to_device`` (ComfyUI-GGUF's: it would copy a patched
      F16 layer into the tensor memory-mapped read-only from the ``.gguf`` file, and the process
      dies with SIGSEGV), since BCG cannot tell where such a patcher writes;
    * a weight that is a tensor subclass (GGUF's ``GGMLTensor``, ComfyUI's quantized tensors):
      its memory and its patching are its class's;
    * ComfyUI's quantized and mixed-precision layers (``comfy_quant``, converted ``scaled_fp8``),
      which re-quantize a patched weight through their ``set_weight`` and assert it is not in place;
    * a weight in host memory that is not in a writable mapping of this process
      (:func:`host_memory_writable`; a memory-mapped file opened read-only).

    Refused means LoRA stays out of place: weights are replaced, the address state changes, and
    graphs are dropped and captured again.
    """
    from comfy.model_patcher import ModelPatcher

    patcher = type(model_patcher)
    if getattr(patcher, "patch_weight_to_device", None) is not ModelPatcher.patch_weight_to_device:
        return f"{patcher.__qualname__} (not ComfyUI's ModelPatcher) patches weights its own way"
    host: list[torch.Tensor] = []
    for name, t in [*diffusion_model.named_parameters(), *diffusion_model.named_buffers()]:
        if type(t) not in (torch.Tensor, torch.nn.Parameter):
            return f"{name} is a {type(t).__qualname__}, whose memory its class manages"
        if t.device.type == "cpu" and t.numel():
            host.append(t)
    for name, module in diffusion_model.named_modules():
        if any(callable(getattr(module, f"set_{p}", None)) for p in module._parameters):
            return f"quantized or mixed-precision layers ({name or 'root'}) patch weights out of place"
    if host and not host_memory_writable(host):
        return "a weight lies in read-only or unknown host memory (a memory-mapped file)"
    return None


def host_memory_writable(tensors: list[torch.Tensor]) -> bool:
    """Whether the memory of every host tensor lies in a writable mapping of this process, read
    from ``/proc/self/maps``; False where that file cannot be read (not Linux): unproven."""
    try:
        with open("/proc/self/maps") as maps:
            spans = []
            for line in maps:
                where, perms = line.split(None, 2)[:2]
                start, end = where.split("-")
                spans.append((int(start, 16), int(end, 16), "w" in perms))
    except OSError:
        return False
    spans.sort()
    starts = [s for s, _, _ in spans]
    for t in tensors:
        storage = t.untyped_storage()
        first, size = storage.data_ptr(), storage.nbytes()
        i = bisect.bisect_right(starts, first) - 1
        if i < 0:
            return False
        # A storage may span adjacent mappings (an allocation grown across them): each must be writable.
        address = first
        while address < first + size:
            if i >= len(spans) or spans[i][0] > address or not spans[i][2]:
                return False
            address = spans[i][1]
            i += 1
    return True


def plain_subclass_weights(diffusion_model: Any) -> bool:
    """Whether the DiT's weights include a plain tensor subclass (``dispatch_modes.is_plain_subclass``:
    its data in its own storage, its own code running in the forward: ComfyUI-GGUF's ``GGMLTensor``). For such a model the session (``hooks.install``) stages the forward's
    host-to-device copies through pinned buffers (``core/host_copies.py``: GGUF moves a LoRA kept
    in host memory to the device at every dequantization; what those copies carry is the weights'
    ``patches``, which the fingerprint holds, so a changed LoRA captures anew)."""
    return any(is_plain_subclass(t) for t in diffusion_model.parameters())
