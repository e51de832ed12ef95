"""Each family's synthetic-checkpoint recipe (:class:`..recipe.FamilyInfo`), one module per module of
``bcg_runtime.comfy.models`` that the tests and benchmarks build a model of, named alike: the
product's module holds the family's adapter and warm-up facts, the recipe here names and reads them
(``adapter=``, ``facts=``) beside what only a random-weight checkpoint needs (ComfyUI's detection
config, depths, test sizes). Every module of this package that defines ``RECIPE`` is a recipe:
adding one is adding its file, with no list here to keep in step.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..recipe import FamilyInfo

#: The product's order (``bcg_runtime.comfy.models``): the families the pack was first written for
#: come first, the rest follow by module name.
_FIRST = ("flux", "zimage", "qwen_image")


def _modules() -> tuple:
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.ispkg]
    order = sorted(names, key=lambda n: (_FIRST.index(n) if n in _FIRST else len(_FIRST), n))
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in order)


RECIPE_MODULES = tuple(m for m in _modules() if hasattr(m, "RECIPE"))
#: Each recipe by name (``bench.synthetic`` builds from these).
RECIPES: dict[str, FamilyInfo] = {m.RECIPE.name: m.RECIPE for m in RECIPE_MODULES}
