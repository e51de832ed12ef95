"""No import inside a function climbs back to a module that imports the one it sits in: such an
import hides a cycle (the core calling up into the glue, a decider reaching into the hook that
calls it). Module-level imports are the layout; a function-level import may only reach down or
across, to a module that does not import its importer."""

import ast
import pathlib

import pytest

pytestmark = pytest.mark.unit

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "bcg_runtime"


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    """The bcg_runtime modules an ``from ... import`` names (the module, and each name that is a module)."""
    if node.level:
        base = importer.split(".")
        base = base if is_package else base[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not target.startswith("bcg_runtime"):
        return []
    names = [f"{target}.{alias.name}" for alias in node.names]
    return names if node.module is None else [target, *names]  # ``from . import x``: x, not the package


def _imports() -> tuple[dict[str, set[str]], list[tuple[str, str, int]]]:
    top: dict[str, set[str]] = {}
    inner: list[tuple[str, str, int]] = []
    for path in PACKAGE.rglob("*.py"):
        name = _module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        top.setdefault(name, set())
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            targets = _resolve(name, path.name == "__init__.py", node)
            if node.col_offset == 0:
                top[name].update(targets)
            else:
                inner.extend((name, target, node.lineno) for target in targets)
    return top, inner


def _reach(top: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports at module level, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        for target in top.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_no_function_level_import_climbs_back_to_a_module_that_imports_its_importer():
    top, inner = _imports()
    climbing = sorted(
        f"{importer}:{line} imports {target} inside a function, and {target} imports {importer} (through module-level imports)"
        for importer, target, line in inner
        if importer in _reach(top, target)
    )
    assert not climbing, "\n".join(climbing)


def test_the_module_level_imports_have_no_cycle():
    top, _ = _imports()
    cycles = sorted(name for name in top if name in _reach(top, name) and not name.endswith("__init__"))
    packages = {name for name in top if (PACKAGE.parent / name.replace(".", "/") / "__init__.py").exists()}
    cycles = [name for name in cycles if name not in packages]
    assert not cycles, cycles
