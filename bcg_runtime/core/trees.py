"""Walking the argument and output trees of a captured call.

Four jobs, each a small recursive function:

* :func:`flatten_inputs` turns ``(args, kwargs)`` into a flat list of tensor leaves plus a
  hashable *structure* that records everything else (containers, constants, tensor specs).
  Together they are the call's key; the leaves are what gets copied into static buffers.
* :func:`clone_tree` clones every tensor of an output tree, so a replayed output never aliases
  the static buffer that the next replay overwrites (cond and uncond calls of one shape would
  otherwise return the same memory).
* :func:`map_tensors` rebuilds a tree around new tensor leaves (clones, non-owning views).
* :func:`copy_tree_into` writes a freshly computed tree into a recorded one of the same shape
  (bridge buffers after an eager break).

Trees are built of tensors, tuples (named tuples too), lists, dicts, constants and, for outputs
only, plain objects whose ``__dict__`` holds tensors (diffusers-style output objects).
"""

from __future__ import annotations

import copy
import enum
from typing import Any, Callable, Hashable, Iterable, NamedTuple

import torch
from torch.utils._pytree import tree_flatten

#: Types whose *value* enters the key: host values are baked into the captured Python control flow.
CONSTANT_TYPES = (type(None), bool, int, float, str, bytes, torch.dtype, torch.device, enum.Enum)


#: ``str(device)`` by device: a spec is made for every tensor of every DiT call.
_DEVICE_NAMES: dict[torch.device, str] = {}


class TensorSpec(NamedTuple):
    """What a kernel sees of a tensor besides its values: shape, strides, dtype, device."""

    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: torch.dtype
    device: str

    @classmethod
    def of(cls, t: torch.Tensor) -> "TensorSpec":
        device = t.device
        name = _DEVICE_NAMES.get(device)
        if name is None:
            name = _DEVICE_NAMES[device] = str(device)
        return cls(tuple(t.shape), tuple(t.stride()), t.dtype, name)

    def describe(self) -> str:
        dtype = str(self.dtype).replace("torch.", "")
        return f"{dtype}[{','.join(str(s) for s in self.shape)}]"


class UnkeyableArgument(TypeError):
    """An argument holds an object whose effect on the computation cannot be keyed."""

    def __init__(self, path: str, obj: Any):
        self.path = path
        super().__init__(
            f"argument {path} is a {type(obj).__name__}, which cannot be part of a graph key; "
            "pass it as an opaque argument and describe it in key_extra, or leave the call eager"
        )


class MixedDevices(ValueError):
    """A call's tensors sit on more than one device.

    A CUDA kernel reads a 0-dim CPU tensor as a host scalar when it is launched, so a capture
    would freeze that value into the graph and every replay would reuse it.
    """

    def __init__(self, devices: set):
        names = ", ".join(sorted(str(d) for d in devices))
        super().__init__(f"tensors on several devices ({names}): a graph would freeze the host values")


def flatten_inputs(tree: Any, path: str = "") -> tuple[list[torch.Tensor], Hashable]:
    """Return ``(tensor_leaves, structure)`` for an input tree.

    ``structure`` is hashable and equal for two trees exactly when they have the same containers,
    the same constants and tensors with the same :class:`TensorSpec` in the same places.
    Raises :class:`UnkeyableArgument` for any other object, naming where it sits.
    """
    leaves: list[torch.Tensor] = []
    try:
        return leaves, _flatten(tree, leaves)
    except _Unkeyable as e:
        where = (path or "args") + "".join(reversed(e.steps))
        raise UnkeyableArgument(f"{where} key {e.obj!r}" if e.is_key else where, e.obj) from None


class _Unkeyable(Exception):
    """What :func:`_flatten` refuses; the containers it sits in add their steps on the way out, so
    the walk formats no path unless one is needed (it runs on every DiT call)."""

    def __init__(self, obj: Any, is_key: bool = False):
        self.obj, self.is_key, self.steps = obj, is_key, []


def _flatten(obj: Any, leaves: list[torch.Tensor]) -> Hashable:
    if isinstance(obj, torch.Tensor):
        leaves.append(obj)
        return ("T", TensorSpec.of(obj))
    if isinstance(obj, CONSTANT_TYPES):
        # float('nan') != itself, which would make a key miss forever; repr is stable.
        return ("C", type(obj).__name__, repr(obj) if isinstance(obj, float) else obj)
    if isinstance(obj, tuple):
        return ("tuple", type(obj).__qualname__, _flatten_items(enumerate(obj), leaves, named=False))
    if isinstance(obj, list):
        return ("list", _flatten_items(enumerate(obj), leaves, named=False))
    if isinstance(obj, dict):
        for k in obj:
            if not isinstance(k, CONSTANT_TYPES):
                raise _Unkeyable(k, is_key=True)
        return ("dict", _flatten_items(obj.items(), leaves, named=True))
    raise _Unkeyable(obj)


def _flatten_items(pairs: Iterable[tuple[Any, Any]], leaves: list[torch.Tensor], named: bool) -> tuple:
    """A container's ``(index or key, item)`` pairs flattened; ``named``: each kept with its key."""
    items = []
    for k, v in pairs:
        if isinstance(v, torch.Tensor):  # the common leaf, without a call (the DiT's hot path)
            leaves.append(v)
            flat = ("T", TensorSpec.of(v))
        else:
            try:
                flat = _flatten(v, leaves)
            except _Unkeyable as e:
                e.steps.append(f"[{k!r}]")
                raise
        items.append((k, flat) if named else flat)
    return tuple(items)


def unflatten_inputs(tree: Any, leaves: list[torch.Tensor]) -> Any:
    """Rebuild ``tree`` with its tensor leaves replaced, in :func:`flatten_inputs` order."""
    it = iter(leaves)
    return _rebuild(tree, it)


def _rebuild(obj: Any, it) -> Any:
    if isinstance(obj, torch.Tensor):
        return next(it)
    if isinstance(obj, tuple):
        items = [_rebuild(v, it) for v in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    if isinstance(obj, list):
        return [_rebuild(v, it) for v in obj]
    if isinstance(obj, dict):
        return {k: _rebuild(v, it) for k, v in obj.items()}
    return obj


def map_tensors(obj: Any, fn: Callable[[torch.Tensor], Any], objects: bool = False) -> Any:
    """``obj`` with every tensor inside tuples, lists and dicts replaced by ``fn(tensor)``.

    Containers are rebuilt around the new leaves (named tuples and dict subclasses keep their
    type). With ``objects=True``, plain objects whose ``__dict__`` holds tensors are shallow-copied
    with their attributes mapped too (diffusers-style output objects); anything else is returned
    as it is.
    """
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, tuple):
        items = [map_tensors(v, fn, objects) for v in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    if isinstance(obj, list):
        return [map_tensors(v, fn, objects) for v in obj]
    if isinstance(obj, dict):
        out = copy.copy(obj)  # keeps dict subclasses (OrderedDict, ModelOutput-like)
        for k, v in obj.items():
            out[k] = map_tensors(v, fn, objects)
        return out
    if objects and not isinstance(obj, CONSTANT_TYPES) and hasattr(obj, "__dict__") and _holds_tensor(vars(obj)):
        out = copy.copy(obj)
        for k, v in vars(obj).items():
            setattr(out, k, map_tensors(v, fn, objects))
        return out
    return obj


def make_static_buffer(t: torch.Tensor) -> torch.Tensor:
    """A new tensor with ``t``'s layout and values, owned by the caller for a graph's life.

    Dense tensors keep their strides, so the captured kernels see the layout eager would see;
    overlapping or sparse layouts (e.g. ``expand``) cannot be a copy destination and become
    contiguous.
    """
    if not t.is_contiguous() and _gapped_without_overlap(t):
        # A view with gaps (a joint latent's stream at batch 2: batch stride over both streams)
        # keeps its strides too: a contiguous buffer would send kernels down another path.
        extent = 1 + sum((n - 1) * st for n, st in zip(t.shape, t.stride()))
        buf = torch.empty(extent, dtype=t.dtype, device=t.device).as_strided(t.shape, t.stride())
    else:
        buf = torch.empty_like(t, memory_format=torch.preserve_format)  # strides kept when dense
    buf.copy_(t)
    return buf


def _gapped_without_overlap(t: torch.Tensor) -> bool:
    """Whether ``t``'s strides place every element apart (positive strides, each at least the
    extent of the dimensions inside it) with room between them: a layout a copy can write."""
    dims = sorted((st, n) for n, st in zip(t.shape, t.stride()) if n > 1)
    if t.numel() == 0 or any(st <= 0 for st, _ in dims):
        return False
    inner = 1
    for st, n in dims:
        if st < inner:
            return False
        inner = st * n
    return True


def clone_tree(obj: Any) -> Any:
    """Clone every tensor in an output tree; containers and objects are rebuilt around them."""
    return map_tensors(obj, torch.Tensor.clone, objects=True)


def _holds_tensor(obj: Any) -> bool:
    if isinstance(obj, torch.Tensor):
        return True
    if isinstance(obj, (tuple, list)):
        return any(_holds_tensor(v) for v in obj)
    if isinstance(obj, dict):
        return any(_holds_tensor(v) for v in obj.values())
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return any(_holds_tensor(v) for v in vars(obj).values())
    return False


class ReplayDivergence(RuntimeError):
    """An eager break returned something a recorded graph cannot absorb (new shape, new constant)."""


def copy_tree_into(dst: Any, src: Any, path: str = "output") -> None:
    """Write ``src`` into the recorded tree ``dst`` in place.

    Tensors are copied into the recorded storage (skipped when ``src`` already *is* that memory,
    as for an in-place break); non-tensor leaves must be equal, since the graphs after the break
    were captured for the recorded value. Raises :class:`ReplayDivergence` otherwise.
    """
    if isinstance(dst, torch.Tensor):
        if not isinstance(src, torch.Tensor):
            raise ReplayDivergence(f"{path}: recorded a tensor, replay returned {type(src).__name__}")
        if src.shape != dst.shape or src.dtype != dst.dtype:
            raise ReplayDivergence(
                f"{path}: recorded {TensorSpec.of(dst).describe()}, replay returned {TensorSpec.of(src).describe()}"
            )
        if src is not dst and not _same_memory(src, dst):
            dst.copy_(src)
        return
    if isinstance(dst, (tuple, list)):
        if not isinstance(src, (tuple, list)) or len(src) != len(dst):
            raise ReplayDivergence(f"{path}: recorded a sequence of {len(dst)}, replay returned {src!r:.80}")
        for i, (d, s) in enumerate(zip(dst, src)):
            copy_tree_into(d, s, f"{path}[{i}]")
        return
    if isinstance(dst, dict):
        if not isinstance(src, dict) or src.keys() != dst.keys():
            raise ReplayDivergence(f"{path}: recorded dict keys {list(dst)}, replay returned {src!r:.80}")
        for k in dst:
            copy_tree_into(dst[k], src[k], f"{path}[{k!r}]")
        return
    if hasattr(dst, "__dict__") and not isinstance(dst, CONSTANT_TYPES) and _holds_tensor(vars(dst)):
        copy_tree_into(vars(dst), vars(src), path)
        return
    if dst is not src and dst != src:
        raise ReplayDivergence(f"{path}: recorded {dst!r:.80}, replay returned {src!r:.80}")


def _same_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    return (
        a.data_ptr() == b.data_ptr()
        and a.stride() == b.stride()
        and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    )


def outputs_equal(a: Any, b: Any) -> tuple[bool, float]:
    """``(bit-equal, max abs difference)`` of two output trees of one call.

    Tensors are compared by their bits (NaNs in the same places with the same payload are equal,
    ``-0.0`` and ``0.0`` are not), which is at least as strict as ``torch.equal``. Any structural
    difference reports an infinite difference.
    """
    a_leaves, a_spec = tree_flatten(a)
    b_leaves, b_spec = tree_flatten(b)
    if a_spec != b_spec:
        return False, float("inf")
    equal, worst = True, 0.0
    for x, y in zip(a_leaves, b_leaves):
        if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)):
            if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor) or x != y:
                return False, float("inf")
            continue
        if x.shape != y.shape or x.dtype != y.dtype:
            return False, float("inf")
        if not torch.equal(as_bits(x), as_bits(y)):
            equal = False
            worst = max(worst, (x.double() - y.double()).abs().nan_to_num(nan=float("inf")).max().item())
    return equal, worst


_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def as_bits(t: torch.Tensor) -> torch.Tensor:
    """``t`` reinterpreted as integers of its element size (floats; complex as its real pairs), or
    ``t`` itself: ``torch.equal`` on the result is bit-equality, a NaN equal to itself."""
    if t.is_complex():
        t = torch.view_as_real(t)
    if t.dtype.is_floating_point and t.element_size() in _BITS:
        return t.contiguous().view(_BITS[t.element_size()])
    return t


def tensor_bytes(obj: Any) -> int:
    """Bytes held by the tensors of a tree (static buffers, bridge buffers)."""
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (tuple, list)):
        return sum(tensor_bytes(v) for v in obj)
    if isinstance(obj, dict):
        return sum(tensor_bytes(v) for v in obj.values())
    return 0
