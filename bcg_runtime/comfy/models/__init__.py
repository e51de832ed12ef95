"""One adapter per supported model family; :func:`adapter_for` picks it from ComfyUI's model config.

Every module of this package that defines ``ADAPTER`` (and its warm-up ``FACTS``) is a family:
adding one is adding its file (and its tests, and its synthetic-checkpoint recipe in
``bench/recipes/``), with no list here to keep in step.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from .base import ModelAdapter, WarmupFacts

#: The families the pack was first written for come first (their order is the docs' order); the
#: rest follow by module name.
_FIRST = ("flux", "zimage", "qwen_image")


def _modules() -> tuple:
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.ispkg]
    order = sorted(names, key=lambda n: (_FIRST.index(n) if n in _FIRST else len(_FIRST), n))
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in order)


_MODULES = _modules()
FAMILY_MODULES = tuple(m for m in _MODULES if hasattr(m, "ADAPTER"))
#: Model classes read and not served, with the one-line reason: a module with ``CONFIG_CLASSES``
#: and ``UNSUPPORTED_REASON`` instead of an adapter (e.g. HiDream's MoE), or a module grouping
#: several classes with a reason each in ``UNSUPPORTED_REASONS`` (``wan_unsupported``, ``dit_pending``).
UNSUPPORTED: dict[str, str] = {
    **{
        name: module.UNSUPPORTED_REASON
        for module in _MODULES
        if hasattr(module, "UNSUPPORTED_REASON")
        for name in module.CONFIG_CLASSES
    },
    **{name: reason for module in _MODULES for name, reason in getattr(module, "UNSUPPORTED_REASONS", {}).items()},
}
#: ``comfy.supported_models`` classes outside BCG's scope (UNets, audio, 3-D and vision models),
#: with what each is (``out_of_scope``): listed so the support table names every class.
OUT_OF_SCOPE: dict[str, str] = {
    name: what for module in _MODULES for name, what in getattr(module, "OUT_OF_SCOPE", {}).items()
}
#: Models of SGLang's diffusion BCG with no ComfyUI class (``not_in_comfyui``), and why they are not served.
NOT_IN_COMFYUI: dict[str, str] = {
    name: why for module in _MODULES for name, why in getattr(module, "NOT_IN_COMFYUI", {}).items()
}
#: Each adapter once: a family may have more than one module (FLUX.2 klein and dev), each naming
#: the same adapter with its own warm-up facts.
ADAPTERS: tuple[ModelAdapter, ...] = tuple(dict.fromkeys(m.ADAPTER for m in FAMILY_MODULES))
SUPPORTED = ", ".join(a.display_name for a in ADAPTERS)


def config_class_name(model_patcher: Any) -> str:
    return type(getattr(model_patcher.model, "model_config", None)).__name__


def adapter_for(model_patcher: Any) -> ModelAdapter | None:
    """The adapter for a ComfyUI ``ModelPatcher``, or None for an unsupported family."""
    name = config_class_name(model_patcher)
    for adapter in ADAPTERS:
        if name in adapter.config_classes:
            return adapter.for_model(model_patcher)
    return None


#: Each family module by its name: a family's (``flux2``) and each module beside it that names the
#: same adapter for another model of the family (``flux2_dev``: FLUX.2 [dev], with its own text
#: encoder's facts). Tests and the benchmark speak these names (their recipes are named alike).
_BY_NAME: dict[str, Any] = {m.__name__.rpartition(".")[2]: m for m in FAMILY_MODULES}


def _family_module(family: str):
    if isinstance(family, str) and family in _BY_NAME:
        return _BY_NAME[family]
    raise ValueError(f"model family '{family}' is not supported; accepted: {', '.join(a.family for a in ADAPTERS)}")


def by_family(family: str) -> ModelAdapter:
    """The adapter of a family name or of the name of a module beside it (``flux2_dev``)."""
    return _family_module(family).ADAPTER


def warmup_facts(family: str) -> WarmupFacts:
    """The :class:`WarmupFacts` of a family name or of the name of a module beside it."""
    return _family_module(family).FACTS


__all__ = [
    "ADAPTERS",
    "ModelAdapter",
    "OUT_OF_SCOPE",
    "SUPPORTED",
    "UNSUPPORTED",
    "WarmupFacts",
    "adapter_for",
    "by_family",
    "config_class_name",
    "warmup_facts",
]
