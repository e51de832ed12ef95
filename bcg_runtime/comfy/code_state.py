"""The code a DiT forward runs, as a replay must find it: ComfyUI's module globals and the class
dictionaries of the DiT's modules.

A graph replays the kernels its capture launched. Eager looks every function, class and module
value up by name at each call, so a node that rebinds one after a capture
(``comfy.ldm.flux.math.apply_rope = fused_rope``, ``DoubleStreamBlock.forward = patched``,
``torch.nn.functional.scaled_dot_product_attention = sageattn``) changes eager's answer and not
the graph's. :class:`CodeState` is default-deny: it holds every global of every imported ComfyUI
module (``comfy.*``, ``comfy_kitchen*``) and of torch's two namespaces the forwards call through,
and every entry of the class dictionaries along the MRO of the DiT's module, parameter and buffer
classes: numbers, strings and None by value, everything else by identity (held, so an id is never
reused). The fingerprint takes it at each sampling run's start; a graph serves only while it is equal,
and a change names the rebound names, drops the model's graphs and captures again under the new code.

Left out, each with its reason: modules whose code runs only around the DiT call
(:data:`MODULES_AROUND_THE_FORWARD`), the attention functions the fingerprint holds as a part of
their own, the values forwards read that ComfyUI changes after import, each handled where
:data:`PROCESS_STATE_READ_BY_FORWARDS` says, and the other globals ComfyUI rebinds while it runs,
which no forward reads (:data:`REBOUND_OUTSIDE_THE_FORWARD`). ``tests/comfy/test_process_state.py``
reads the host's source and fails on a module-level value ComfyUI changes after import that these
lists do not classify, so ComfyUI's own rebinding is listed, not guessed; what another pack rebinds
is a change.

What it cannot see: a rebinding made and undone within one sampling run (the per-call token reads
only the attention functions, ``module_token.attention_slots``, the one kind nodes swap per step;
the rest is read once per run), a function's ``__code__`` replaced in place, a mutable global (a list, a dict)
edited in place (``comfy.ops.SDPA_BACKEND_PRIORITY`` is in ``kernel_settings`` for that reason), and
code in modules of other packs that a forward reaches only through an object.
"""

from __future__ import annotations

import operator
import sys
from types import ModuleType
from typing import Any, Iterable, Iterator

from .host_facts import (
    CLASS_ATTRIBUTES_OUTSIDE_THE_FORWARD,
    MODULES_AROUND_THE_FORWARD,
    PROCESS_STATE_READ_BY_FORWARDS,
    REBOUND_OUTSIDE_THE_FORWARD,
    TORCH_NAMESPACES,
)

#: Compared by value: a global rebound to an equal number or string reads the same.
_SIMPLE = (bool, int, float, complex, str, bytes, type(None))
_MISSING = object()

_NAMES: tuple[int, list[str]] = (-1, [])


def watched_module(name: str) -> bool:
    """Whether the state holds the globals of the module ``name``."""
    if name in TORCH_NAMESPACES:
        return True
    if not (name == "comfy" or name.startswith(("comfy.", "comfy_kitchen"))):
        return False
    return not any(name == p or name.startswith(p + ".") for p in MODULES_AROUND_THE_FORWARD)


def _module_names() -> list[str]:
    """Names of the watched modules now imported, rescanned only when ``sys.modules`` grew or
    shrank (a ComfyUI process holds thousands of modules)."""
    global _NAMES
    count = len(sys.modules)
    if _NAMES[0] != count:
        _NAMES = (count, sorted(n for n in list(sys.modules) if watched_module(n)))
    return _NAMES[1]


def _namespaces(prefix: str = "") -> Iterator[tuple[str, Any, dict]]:
    """``(name, module, its dictionary)`` of each watched module now imported whose name starts
    with ``prefix``; a ``sys.modules`` entry that is None or no module is passed by."""
    for name in _module_names():
        if name.startswith(prefix):
            module = sys.modules.get(name)
            namespace = getattr(module, "__dict__", None)
            if isinstance(namespace, dict):
                yield name, module, namespace


#: Where :func:`attention_global` looks, and what it looks for.
_MODEL_MODULES, _ATTENTION_NAME = "comfy.ldm.", "optimized_attention"


def attention_global(module_name: str, attr: str) -> bool:
    """An attention function bound in a ComfyUI model module (``optimized_attention*`` of a
    ``comfy.ldm`` module: FLUX binds its own copy, so a swap of the generic one says nothing about
    FLUX's). The fingerprint holds these as a part of their own, and its per-call token reads them."""
    return module_name.startswith(_MODEL_MODULES) and attr.startswith(_ATTENTION_NAME)


def attention_globals() -> list[tuple[str, dict, str]]:
    """``(module name, its dictionary, name)`` of every :func:`attention_global` now imported."""
    # attention_global's test, its module half done once per module: a run walks every name of
    # every model module here (thousands), twice.
    return [
        (name, namespace, attr)
        for name, _, namespace in _namespaces(_MODEL_MODULES)
        for attr in list(namespace)
        if attr.startswith(_ATTENTION_NAME)
    ]


def left_out(module_name: str, attr: str) -> bool:
    """Whether the state leaves the global ``module_name.attr`` out (the lists above)."""
    if (module_name, attr) in REBOUND_OUTSIDE_THE_FORWARD or (module_name, attr) in PROCESS_STATE_READ_BY_FORWARDS:
        return True
    if attr.startswith("__"):
        # a module's own dunders, and what torch.compile puts into the globals of the code it
        # compiles (``__compiled_fn_N``, ``__resume_at_N``, ``__builtins_dict___N``): no forward
        # reads one by name
        return True
    # the attention functions are a fingerprint part of their own ("attention function swapped")
    return attention_global(module_name, attr)


def _class_attribute_left_out(attr: str) -> bool:
    return attr in CLASS_ATTRIBUTES_OUTSIDE_THE_FORWARD or attr.startswith("___")


def _same(a: Any, b: Any) -> bool:
    return a is b or (type(a) is type(b) and type(a) in _SIMPLE and a == b)


def _submodule_on_one_side(a: Any, b: Any) -> bool:
    """A package's attribute for a submodule one side imported and the other not yet."""
    return (a is _MISSING and isinstance(b, ModuleType)) or (b is _MISSING and isinstance(a, ModuleType))


class _Namespace:
    """One dictionary as it was: its keys and values, in order (held: ids stay unique)."""

    __slots__ = ("owner", "keys", "values")

    def __init__(self, owner: Any, namespace: Any):
        self.owner = owner
        # Two C-level passes (a quarter of the time of splitting ``items()``; a run takes some 350
        # modules' dictionaries). Another thread may add or remove a name between them, which the
        # lengths show: then one pass over the items, keys and values of one moment.
        keys, values = tuple(namespace), tuple(namespace.values())
        if len(keys) != len(values):
            items = tuple(namespace.items())
            keys, values = tuple(zip(*items)) if items else ((), ())
        self.keys, self.values = keys, values

    def changed(self, new: "_Namespace", left_out: Any) -> list[str]:
        """Names whose value differs in ``new``; a submodule attribute that only one side has (a
        submodule imported since) is no change. Symmetric: ``a.changed(b)`` names what
        ``b.changed(a)`` names, so the states' equality is."""
        if new.owner is not self.owner:
            return ["(the module itself, replaced)"]
        if self.keys == new.keys and all(map(operator.is_, self.values, new.values)):
            return []
        before, after = dict(zip(self.keys, self.values)), dict(zip(new.keys, new.values))
        names = []
        for name in before.keys() | after.keys():
            a, b = before.get(name, _MISSING), after.get(name, _MISSING)
            if _same(a, b) or left_out(name) or _submodule_on_one_side(a, b):
                continue
            names.append(str(name))
        return sorted(names)


def along_mro(roots: Iterable[type]) -> list[type]:
    """Every class along the MRO of ``roots`` but ``object``, each once, in a stable order."""
    seen: dict[type, None] = {}
    for root in sorted(roots, key=lambda c: f"{c.__module__}.{c.__qualname__}"):
        for cls in root.__mro__:
            if cls is not object:
                seen.setdefault(cls, None)
    return list(seen)


class CodeState:
    """The watched modules' globals and the DiT's classes' dictionaries at one moment. Equal when
    no watched name was rebound since (modules imported since, and modules gone from
    ``sys.modules``, are no change: a forward captured before never ran their code)."""

    __slots__ = ("modules", "classes")

    def __init__(self, modules: dict[str, _Namespace], classes: dict[type, _Namespace]):
        self.modules = modules
        self.classes = classes

    @classmethod
    def take(cls, classes: Iterable[type]) -> "CodeState":
        modules = {name: _Namespace(module, namespace) for name, module, namespace in _namespaces()}
        return cls(modules, {c: _Namespace(c, vars(c)) for c in classes})

    def retake(self) -> "CodeState":
        """The same modules' and classes' state now."""
        return CodeState.take(self.classes)

    def changes_from(self, old: "CodeState", limit: int | None = None) -> list[str]:
        """The rebound names, ``module.name`` or ``module.Class.name``, sorted; at most ``limit``."""
        found: list[str] = []
        for name, now in self.modules.items():
            then = old.modules.get(name)
            if then is not None:
                found += [f"{name}.{a}" for a in then.changed(now, lambda a, m=name: left_out(m, a))]
            if limit is not None and len(found) >= limit:
                return found[:limit]
        for klass, now in self.classes.items():
            then = old.classes.get(klass)
            if then is not None:
                where = f"{klass.__module__}.{klass.__qualname__}"
                found += [f"{where}.{a}" for a in then.changed(now, _class_attribute_left_out)]
            if limit is not None and len(found) >= limit:
                return found[:limit]
        return found

    def describe_change(self, old: "CodeState") -> str:
        """The change from ``old`` as the fingerprint's reason says it (the first three names)."""
        names = self.changes_from(old, limit=4)
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        return f"ComfyUI code rebound ({shown})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CodeState) and (self is other or not self.changes_from(other, limit=1))

    def __hash__(self) -> int:
        # equal states may differ in which modules they hold (imports since), so nothing of that
        # enters the hash; the fingerprint's other parts tell states apart
        return hash(CodeState)
