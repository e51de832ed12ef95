"""One adapter per supported model family; :func:`adapter_for` picks it from ComfyUI's model config."""

from __future__ import annotations

from typing import Any

from . import flux, flux2, qwen_image, zimage
from .base import ModelAdapter
from .recipe import FamilyInfo

FAMILY_MODULES = (flux, zimage, qwen_image, flux2)
ADAPTERS: tuple[ModelAdapter, ...] = tuple(m.ADAPTER for m in FAMILY_MODULES)
#: Each family's synthetic-checkpoint recipe by family name (``..synthetic`` builds from these).
RECIPES: dict[str, FamilyInfo] = {m.RECIPE.name: m.RECIPE for m in FAMILY_MODULES}
SUPPORTED = ", ".join(a.display_name for a in ADAPTERS)


def config_class_name(model_patcher: Any) -> str:
    return type(getattr(model_patcher.model, "model_config", None)).__name__


def adapter_for(model_patcher: Any) -> ModelAdapter | None:
    """The adapter for a ComfyUI ``ModelPatcher``, or None for an unsupported family."""
    name = config_class_name(model_patcher)
    for adapter in ADAPTERS:
        if name in adapter.config_classes:
            return adapter
    return None


def by_family(family: str) -> ModelAdapter:
    for adapter in ADAPTERS:
        if adapter.family == family:
            return adapter
    raise ValueError(f"model family '{family}' is not supported; accepted: {', '.join(a.family for a in ADAPTERS)}")


__all__ = ["ADAPTERS", "FamilyInfo", "ModelAdapter", "RECIPES", "SUPPORTED", "adapter_for", "by_family", "config_class_name"]
