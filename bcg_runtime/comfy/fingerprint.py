"""The fingerprint of a model: everything its DiT forward can read besides its arguments.

A graph replays the kernels of one forward with the addresses and Python values it saw at
capture. It gives eager's answer only while everything that forward reads besides its arguments
is what it was captured with. :func:`take` gathers all of it for a ModelPatcher, in four kinds:

* **read by address** (a replay reads the memory, so the values may change in place, which is how
  ComfyUI's in-place LoRA patching works): every parameter, buffer and plain tensor attribute of
  every submodule of the DiT, and the tensors of a bypass-LoRA adapter;
* **frozen at capture** (a replay cannot see a new value): every other instance attribute of every
  submodule (numbers, strings, flags, tuples by value; functions and objects by identity, held
  alive so an id is never reused), the object patches on the DiT, the attention functions bound in
  ComfyUI's model modules, the code the forward runs (:mod:`code_state`: every global of ComfyUI's
  modules and torch's namespaces, the dictionaries of the DiT's classes), torch's math flags (TF32,
  reduced-precision reductions, SDPA backends, deterministic algorithms), the process settings that pick kernels or paths (:func:`kernel_settings`:
  BLAS library, SDPA order, ComfyUI's SDPA list and training flag, comfy-kitchen's backends), the
  CUDA allocator and the device;
* **classified and left out, each with the reason** (:data:`OUTSIDE_THE_FORWARD`): ``model_options``
  entries that act on the DiT's arguments or outputs between calls, never inside the forward
  (CFG functions, wrappers, callbacks), object patches on the model around the DiT
  (``model_sampling``), weight patches (applied into the weights before the run: read by address);
* **unclassified**: a forward override that is not an object patch nor a bypass-LoRA hook, a
  forward hook or pre-hook on any submodule or globally, a comfy.ops ``weight_function`` /
  ``bias_function``, a parametrization, an active torch function or dispatch mode, ComfyUI hook
  patches (they patch weights between calls), or a ``model_options`` entry nobody listed. Any of
  these makes :attr:`Fingerprint.refusal` a reason that names it, and the call runs eager: BCG does
  not guess what code it does not know does;
* **a graph already**: a module carrying ComfyUI's own CUDA graph (``_comfy_graph``, the model
  compiler of 0.34+): the reason is of kind ``core_graph`` and the call runs eager, since BCG does
  not graph a graph. The compiler's malloc-graph recorder (``_comfy_malloc_graph``) is left out.

Two fingerprints are equal when every part is; a graph serves only a call whose fingerprint equals
its capture's. The whole walk runs at each sampling run's start; within a run each call compares a
cheap token of the modules' instance dictionaries (:func:`modules_token`: sizes, forward overrides,
torch's hook counter) and takes the whole fingerprint again only when that token changed.
"""

from __future__ import annotations

from typing import Any, Hashable

import torch

from ..core.outside_reads import storage_keys
from ..core.reasons import CORE_GRAPH, UNCLASSIFIED, Reason
from . import code_state
from .host_facts import (
    CORE_GRAPH_ATTR,
    MODULE_INTERNALS,
    NOT_READ_BY_THE_FORWARD,
    OUTSIDE_THE_FORWARD,
    TENSOR_FLAGS,
)
from .kernel_settings import kernel_settings, torch_math_flags


def _is_bypass_hook_forward(fn: Any) -> bool:
    """A forward that ComfyUI's bypass LoRA (``comfy/weight_adapter/bypass.py``) injected."""
    owner = getattr(fn, "__self__", None)
    return type(owner).__name__ == "BypassForwardHook" and type(owner).__module__.startswith("comfy.")


#: How a changed part reads in a log line or reason.
CHANGES = {
    "weights": "weights moved",
    "module overrides": "a module's forward was overridden or restored (bypass LoRA, a patch)",
    "attention function": "attention function swapped",
    "kernel settings": "a process setting that picks kernels changed (SDPA backend order, BLAS library, "
    "ComfyUI's training flag or comfy-kitchen's backends)",
}


class Fingerprint:
    """The state of one model's DiT for graphs (see the module docstring). ``parts`` maps a part's
    name to its hashable value; ``keep`` holds every object identified by id; ``refusal`` is the
    reason the model cannot be served at all, or None."""

    __slots__ = ("parts", "keep", "refusal", "_hash")

    def __init__(self, parts: dict[str, Hashable], keep: list, refusal: Reason | None):
        self.parts = parts
        self.keep = keep
        self.refusal = refusal
        self._hash = hash(tuple(parts.items()))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return isinstance(other, Fingerprint) and self._hash == other._hash and self.parts == other.parts

    def __hash__(self) -> int:
        return self._hash

    def change_from(self, old: "Fingerprint") -> str:
        """What differs from ``old``, in words a user can act on."""
        changed = []
        for name, value in self.parts.items():
            then = old.parts.get(name)
            if value != then:
                describe = getattr(value, "describe_change", None)
                changed.append(
                    describe(then) if describe and then is not None else CHANGES.get(name, f"{name} changed")
                )
        return ", ".join(changed) or "nothing"


def _address(t: torch.Tensor, keep: list) -> tuple:
    """Where a tensor's data lives and the Python state its class carries: address, dtype and
    shape; for a tensor subclass that keeps its data in inner tensors (ComfyUI's quantized weights:
    fp8/nvfp4 data plus scales, all read by a graph) the addresses of every inner tensor and the
    flatten's metadata; for any other subclass (ComfyUI-GGUF's ``GGMLTensor``: quant type, logical
    shape and the LoRA ``patches`` it applies at dequantization) also the class and every instance
    attribute (:func:`_value`: plain values by value, objects by identity, held in ``keep``). A
    subclass's forward-time behaviour can hang on that state while the address stays put."""
    cls = type(t)
    flatten = getattr(t, "__tensor_flatten__", None)
    if callable(flatten):
        names, meta = flatten()
        inner = tuple(sorted((name, _address(getattr(t, name), keep)) for name in names))
        return (cls.__name__, inner, _value(meta, keep))
    where = (t.data_ptr(), t.dtype, tuple(t.shape))
    if cls is torch.Tensor or cls is torch.nn.Parameter:
        return where
    keep.append(cls)
    state = tuple(sorted((k, _value(v, keep)) for k, v in vars(t).items() if k not in TENSOR_FLAGS))
    return (*where, id(cls), state)


_PLAIN = (str, int, float, bool, type(None), torch.dtype, torch.device)


def _value(value: Any, keep: list, depth: int = 0, tensors: list | None = None) -> Hashable:
    """A hashable image of a Python value the forward may read: plain values and small containers
    by value, tensors by address (each also put in ``tensors`` when given), everything else by
    identity (held in ``keep``)."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, torch.Tensor):
        if tensors is not None:
            tensors.append(value)
        return ("tensor", _address(value, keep))
    if depth < 3 and isinstance(value, (tuple, list)) and len(value) <= 64:
        return (type(value).__name__, tuple(_value(v, keep, depth + 1, tensors) for v in value))
    if depth < 3 and isinstance(value, dict) and len(value) <= 64:
        return ("dict", tuple((str(k), _value(v, keep, depth + 1, tensors)) for k, v in value.items()))
    keep.append(value)
    return ("id", id(value))


def _unclassified(what: str) -> Reason:
    return Reason(UNCLASSIFIED, f"{what}: BCG cannot tell what it changes, so the model runs eager")


def _module_state(
    diffusion_model: torch.nn.Module,
    patched: set[int],
    scratch: tuple[str, ...],
    keep: list,
    tensors: list | None = None,
    classes: set | None = None,
):
    """``(weights, attributes, overrides, refusal)`` of every submodule (see the module docstring);
    every tensor the walk binds by address also goes into ``tensors`` when given, and the class of
    every submodule, parameter and buffer into ``classes``."""
    weights: list = []
    attributes: list = []
    overrides: list = []
    refusal: Reason | None = None
    for name, module in diffusion_model.named_modules(prefix="diffusion_model"):
        for registry in (module._parameters, module._buffers):
            for t in registry.values():
                if t is not None:
                    weights.append(_address(t, keep))
                    if tensors is not None:
                        tensors.append(t)
                    if classes is not None:
                        classes.add(type(t))
        if classes is not None:
            classes.add(type(module))
        d = module.__dict__
        if refusal is None:
            refusal = _hooks_refusal(name, d)
        for attr, value in d.items():
            if (
                attr in MODULE_INTERNALS
                or attr in NOT_READ_BY_THE_FORWARD
                or (module is diffusion_model and attr in scratch)
            ):
                continue
            if attr == CORE_GRAPH_ATTR and value is not None and refusal is None:
                refusal = core_graph_reason(name)
            if isinstance(value, torch.Tensor):
                weights.append(_address(value, keep))
                if tensors is not None:
                    tensors.append(value)
            elif attr == "forward":
                if (
                    getattr(value, "__self__", None) is module
                    and getattr(value, "__func__", None) is type(module).forward
                ):
                    pass  # the class's own forward, bound: ComfyUI restores an object-patched forward so
                elif id(value) in patched:
                    overrides.append((name, "object patch", id(value)))
                elif _is_bypass_hook_forward(value):
                    overrides.append((name, "bypass LoRA", _bypass_key(value.__self__, keep, tensors)))
                elif refusal is None:
                    refusal = _unclassified(f"unknown module override: {name}.forward ({qualname(value)})")
            elif attr in ("weight_function", "bias_function") and value:
                refusal = refusal or _unclassified(f"comfy.ops {attr} on {name} ({qualname(value[0])})")
            else:
                attributes.append((name, attr, _value(value, keep, tensors=tensors)))
        if refusal is None and "parametrizations" in module._modules:
            refusal = _unclassified(f"parametrization on {name}")
    return tuple(weights), tuple(attributes), tuple(overrides), refusal


def core_graph_reason(name: str) -> Reason:
    """The reason for a module that ComfyUI itself replays as a CUDA graph."""
    return Reason(
        CORE_GRAPH,
        f"ComfyUI already runs {name} as a CUDA graph (its model compiler, Dynamic VRAM): BCG does not graph a graph, "
        "the model runs as it would without BCG",
    )


def _hooks_refusal(name: str, d: dict) -> Reason | None:
    for registry in ("_forward_hooks", "_forward_pre_hooks"):
        hooks = d.get(registry)
        if hooks:
            kind = "pre-hook" if "pre" in registry else "hook"
            return _unclassified(f"forward {kind} on {name} ({qualname(next(iter(hooks.values())))})")
    return None


def _bypass_key(hook: Any, keep: list, tensors: list | None = None) -> Hashable:
    """A bypass-LoRA hook by what its forward reads: the hook and adapter objects, the strength,
    the adapter's tensors by address and its other attributes by value."""
    adapter = hook.adapter
    keep += [hook, adapter, hook.original_forward]  # each held, so no id below is reused
    state = tuple(
        (k, _value(v, keep, tensors=tensors)) for k, v in sorted(vars(adapter).items()) if not k.startswith("__")
    )
    return (id(hook), id(adapter), hook.multiplier, id(hook.original_forward), state)


def qualname(fn: Any) -> str:
    fn = getattr(fn, "__func__", fn)
    module = getattr(fn, "__module__", None) or type(fn).__module__
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{module}.{name}"


def _attention_functions(keep: list) -> tuple:
    """The attention functions bound in ComfyUI's model modules (``code_state.attention_global``)."""
    found = []
    for module_name, namespace, attr in code_state.attention_globals():
        fn = namespace.get(attr)
        if callable(fn):
            found.append((module_name, attr, id(fn)))
            keep.append(fn)
    return tuple(sorted(found))


def process_settings_changed(state: Fingerprint) -> bool:
    """Whether the process-wide settings ``state`` holds (:func:`torch_math_flags`,
    :func:`kernel_settings`, the code's :mod:`code_state`) differ from the settings now: cheap,
    unlike taking a fingerprint."""
    parts = state.parts
    if parts.get("torch math flags") != torch_math_flags() or parts.get("kernel settings") != kernel_settings():
        return True
    code = parts.get("code")
    return code is not None and code.retake() != code


def _global_refusal() -> Reason | None:
    """Process-wide code that runs inside every module call or op."""
    from torch.nn.modules import module as nn_module

    for registry in ("_global_forward_hooks", "_global_forward_pre_hooks"):
        hooks = getattr(nn_module, registry, None)
        if hooks:
            return _unclassified(
                f"global module {registry[8:-1].replace('_', ' ')} ({qualname(next(iter(hooks.values())))})"
            )
    if torch._C._len_torch_function_stack() or torch._C._len_torch_dispatch_stack():
        return _unclassified("an active torch function or dispatch mode")
    return None


def model_options_refusal(model_options: dict) -> Reason | None:
    """The reason an entry of the run's ``model_options`` makes the model unservable, or None."""
    for name in model_options:
        if name not in OUTSIDE_THE_FORWARD:
            return _unclassified(f"unknown model_options entry '{name}'")
    if model_options.get("registered_hooks"):
        return Reason(
            UNCLASSIFIED,
            "ComfyUI hooks (Create Hook / Set Hooks nodes) patch weights between calls: the model runs eager",
        )
    return None


def take(model_patcher: Any, model_options: dict | None = None, scratch: tuple[str, ...] = ()) -> Fingerprint:
    """The fingerprint of ``model_patcher``'s DiT now; ``model_options``: the run's (default: the
    patcher's); ``scratch``: top-level attributes the forward writes and never reads (the adapter's
    ``forward_scratch_attributes``), left out."""
    keep: list = []
    object_patches = []
    patched: set[int] = set()
    for name, obj in sorted(getattr(model_patcher, "object_patches", {}).items()):
        if name.startswith("diffusion_model"):
            object_patches.append((name, id(obj)))
            patched.add(id(obj))
            keep.append(obj)
        # anything else patches the BaseModel around the DiT (OBJECT_PATCHES_AROUND_THE_DIT)
    diffusion_model = model_patcher.model.diffusion_model
    classes: set[type] = set()
    weights, attributes, overrides, refusal = _module_state(diffusion_model, patched, scratch, keep, classes=classes)
    options = model_patcher.model_options if model_options is None else model_options
    refusal = refusal or _global_refusal() or model_options_refusal(options)
    if refusal is None and getattr(model_patcher, "hook_patches", None):
        refusal = Reason(
            UNCLASSIFIED, "ComfyUI hook patches on the model patch weights between calls: the model runs eager"
        )
    allocator = torch.cuda.get_allocator_backend() if torch.cuda.is_available() else None
    parts = {
        "weights": weights,
        "module attributes": attributes,
        "module overrides": overrides,
        "object patches": tuple(object_patches),
        "attention function": _attention_functions(keep),
        "code": code_state.CodeState.take(code_state.along_mro(classes)),
        "torch math flags": torch_math_flags(),
        "kernel settings": kernel_settings(),
        "allocator": allocator,
        "device": str(getattr(model_patcher, "load_device", None)),
    }
    return Fingerprint(parts, keep, refusal)


def bound_storages(model_patcher: Any, scratch: tuple[str, ...] = ()) -> set[int]:
    """The storages of every tensor :func:`take` binds by address (weights, buffers, tensor
    attributes, bypass-LoRA tensors): a graph reads these freely, since a change of address is a
    fingerprint change and a change of values in place is what ComfyUI's weight patching means. A
    capture's other outside reads are held and guarded by the runner (the run's ``StateBinding.bound_storages``).
    Walks the modules as :func:`take` does: asked once per capture, not per call."""
    tensors: list[torch.Tensor] = []
    _module_state(model_patcher.model.diffusion_model, set(), scratch, [], tensors)
    return storage_keys(tensors)
