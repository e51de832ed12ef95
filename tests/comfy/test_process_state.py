"""comfy layer: every process-wide value a DiT forward reads and ComfyUI changes after import is
classified (``host_facts.PROCESS_STATE_READ_BY_FORWARDS``), and so is every module-level name
ComfyUI rebinds in a module whose globals the fingerprint's code state holds
(``host_facts.REBOUND_OUTSIDE_THE_FORWARD``).

A graph replays the path and kernels its capture took; eager reads module-level state at every
call. A flag that ComfyUI flips at run time and a forward reads (``comfy.model_management.
in_training``, set by the training node) is a way for a replay to leave eager that no list of
known settings foresaw. So this test reads ComfyUI's own source (no import, the host's tree as it
is): the module-level names that some code rebinds or mutates after import, and the functions of
the forward code (``comfy/ldm``, ``comfy.ops``, ``comfy.quant_ops``, ...) that read one. Each pair
found must be in the table with how BCG handles it (in the fingerprint, or why a replay cannot
leave eager through it): a newer ComfyUI that adds such a read fails here, naming it, instead of
replaying past it.

``comfy.cli_args.args`` is left out on purpose: ComfyUI sets its fields at start (cli_args,
cuda_malloc.py, main.py), before any model loads, and nothing in the tree writes them later.

What a static read of the source cannot see, and who covers it: a value changed by code outside
ComfyUI (another node pack; this pack's own mode fast edits ``comfy.ops.SDPA_BACKEND_PRIORITY``),
or a name reached through a local alias. The fingerprint takes the settings known to pick kernels
(``kernel_settings``), the attention functions, every module attribute of the DiT and the code
state (every global of ComfyUI's modules by identity or value, ``code_state.py``) at each run, so
another pack's rebinding is a change; only an edit in place of a mutable global escapes it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

from bcg_testing import comfyui_root

from bcg_runtime.comfy import code_state, host_facts
from bcg_runtime.comfy.host_facts import PROCESS_STATE_READ_BY_FORWARDS
from bcg_runtime.comfy.host_version import running_comfyui_version

pytestmark = pytest.mark.comfy

#: The source the DiT forwards run: the model code and the ops, attention and quantisation layers.
FORWARD_CODE = ("comfy/ldm/", "comfy/ops.py", "comfy/quant_ops.py", "comfy/rmsnorm.py", "comfy/float.py")
#: Method calls that change a container in place.
MUTATORS = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "update", "setdefault", "add", "discard"})


class Source:
    """One module of the tree: its name, whether forward code lives in it, its syntax tree, the
    names it binds at module level and what its imports call other modules."""

    def __init__(self, root: Path, path: Path, modules: set[str]):
        rel = path.relative_to(root).as_posix()
        self.rel, self.name = rel, module_name(rel)
        self.forward = rel.startswith(FORWARD_CODE)
        self.tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        self.top = module_level_names(self.tree)
        self.aliases = import_aliases(self.tree, self.name, rel.endswith("__init__.py"), modules)


def module_name(rel: str) -> str:
    name = rel[: -len(".py")].replace("/", ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def module_level_names(tree: ast.Module) -> set[str]:
    """Names bound at module scope, also inside module-level ``if``/``try``/``with`` blocks."""
    names: set[str] = set()
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name)}
        for field in ("body", "orelse", "finalbody", "handlers"):
            pending.extend(getattr(node, field, []))
    return names


def import_aliases(tree: ast.Module, me: str, package: bool, modules: set[str]) -> dict[str, str]:
    """Local name -> the module it stands for (``import comfy.ops``, ``import x as y``,
    ``from comfy import model_management``, relative imports); names imported from a module by
    value (``from x import FLAG``) are copies taken at import and are left out."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = me.split(".") if package else me.split(".")[:-1]
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}" if base else alias.name
                if full in modules:
                    aliases[alias.asname or alias.name] = full
    return aliases


def dotted(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def resolve(parts: list[str], source: Source, modules: set[str], local: set[str]) -> tuple[str, str] | None:
    """The ``(module, name)`` a dotted reference reads: through an import alias, or a bare name of
    the module's own scope (not shadowed by a local of the function)."""
    head = source.aliases.get(parts[0]) if parts[0] not in local else None
    if head is None:
        own = len(parts) == 1 and parts[0] in source.top and parts[0] not in local
        return (source.name, parts[0]) if own else None
    if head not in modules:  # a package outside the tree (torch: its flags are torch_math_flags')
        return None
    i = 1
    while i < len(parts) and f"{head}.{parts[i]}" in modules:
        head, i = f"{head}.{parts[i]}", i + 1
    return (head, parts[i]) if i < len(parts) else None


def function_locals(fn: ast.AST, declared_global: set[str]) -> set[str]:
    names = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not fn:
            names.add(node.name)
    return names - declared_global


def scan(root: Path) -> tuple[dict, dict, dict]:
    """``(changed, read, rebound)``: module-level names rebound or mutated after import, each with
    where; those of them the forward code reads, each with where; and those rebound (assigned, not
    only mutated in place), each with where."""
    files = [
        p
        for p in root.rglob("*.py")
        if not any(part.startswith(".") or part in ("tests", "custom_nodes") for part in p.relative_to(root).parts)
    ]
    modules = {module_name(p.relative_to(root).as_posix()) for p in files}
    modules |= {name.rsplit(".", n)[0] for name in modules for n in range(1, name.count(".") + 1)}  # packages
    sources = []
    for path in files:
        try:
            sources.append(Source(root, path, modules))
        except SyntaxError:
            continue
    changed: dict[tuple[str, str], set[str]] = defaultdict(set)
    rebound: dict[tuple[str, str], set[str]] = defaultdict(set)
    reads: dict[tuple[str, str], set[str]] = defaultdict(set)
    for source in sources:
        for fn in (n for n in ast.walk(source.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            declared = {name for node in ast.walk(fn) if isinstance(node, ast.Global) for name in node.names}
            local = function_locals(fn, declared)
            for node in ast.walk(fn):
                where = f"{source.rel}:{getattr(node, 'lineno', fn.lineno)}"
                assigned = isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                for target in stored_targets(node):
                    if isinstance(target, ast.Name):
                        found = (source.name, target.id) if target.id in declared else None
                    else:
                        parts = dotted(target)
                        found = parts and resolve(parts, source, modules, local)
                    if found:
                        changed[found].add(where)
                        if assigned and target in targets_of(node):
                            rebound[found].add(where)
                if source.forward and isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
                    parts = dotted(node)
                    found = parts and resolve(parts, source, modules, local)
                    if found:
                        reads[found].add(where)
    return dict(changed), {key: where for key, where in reads.items() if key in changed}, dict(rebound)


def targets_of(node: ast.AST) -> list[ast.AST]:
    """An assignment's own targets (not the container of a subscript target)."""
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def stored_targets(node: ast.AST) -> list[ast.AST]:
    """What a statement or call writes: assignment targets (a subscript's container), and the
    receiver of an in-place mutator call."""
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [t.value if isinstance(t, ast.Subscript) else t for t in targets]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
        return [node.func.value]
    return []


def test_every_flag_a_forward_reads_and_comfyui_changes_at_run_time_is_classified():
    changed, read, _ = scan(comfyui_root())
    unclassified = {key: sorted(read[key])[:3] for key in read if key not in PROCESS_STATE_READ_BY_FORWARDS}
    assert not unclassified, (
        "forward code reads module-level state that ComfyUI changes after import and BCG has not "
        f"classified (add each to host_facts.PROCESS_STATE_READ_BY_FORWARDS with how it is handled): {unclassified}"
    )
    print({key: sorted(where)[:2] for key, where in read.items()})


def test_every_global_comfyui_rebinds_while_it_runs_is_classified_for_the_code_state():
    """The fingerprint's code state drops a model's graphs when a global it holds is rebound. A
    global ComfyUI itself rebinds as it runs (a counter, a queue emptied after each run) would do
    that at every run: each must be left out with why no forward's output depends on it, or be
    handled as a process setting, so the drop is kept for what another pack rebinds."""
    _, _, rebound = scan(comfyui_root())
    watched = {key: sorted(where)[:2] for key, where in rebound.items() if code_state.watched_module(key[0])}
    unclassified = {key: where for key, where in watched.items() if not code_state.left_out(*key)}
    assert not unclassified, (
        "ComfyUI rebinds module-level names the code state holds: add each to "
        f"host_facts.REBOUND_OUTSIDE_THE_FORWARD with why no forward's output depends on it: {unclassified}"
    )
    if running_comfyui_version() == "0.33.0":  # the main target rebinds every listed name: none is stale
        stale = set(host_facts.REBOUND_OUTSIDE_THE_FORWARD) - set(watched)
        assert not stale, sorted(stale)


def test_the_scan_finds_a_flag_that_a_node_sets_and_a_forward_reads(tmp_path):
    """The scanner on a made-up tree: a training-style flag set by a node and read by a model,
    a constant table nobody writes, and a name only a local shadows."""
    (tmp_path / "comfy" / "ldm").mkdir(parents=True)
    (tmp_path / "comfy_extras").mkdir()
    (tmp_path / "comfy" / "__init__.py").write_text("")
    (tmp_path / "comfy" / "ldm" / "__init__.py").write_text("")
    (tmp_path / "comfy" / "model_management.py").write_text("in_training = False\nTABLE = {'a': 1}\n")
    (tmp_path / "comfy_extras" / "nodes_train.py").write_text(
        "import comfy.model_management\n\ndef run():\n    comfy.model_management.in_training = True\n"
    )
    (tmp_path / "comfy" / "ldm" / "model.py").write_text(
        "import comfy.model_management\nfrom comfy import model_management as mm\nLIMIT = 1\n\n"
        "def set_limit(v):\n    global LIMIT\n    LIMIT = v\n\n"
        "def forward(x):\n    in_training = 3\n"
        "    if comfy.model_management.in_training:\n        x = x + mm.TABLE['a']\n    return x * LIMIT\n"
    )
    changed, read, rebound = scan(tmp_path)
    assert set(read) == {("comfy.model_management", "in_training"), ("comfy.ldm.model", "LIMIT")}, read
    assert set(rebound) == set(read)
    assert ("comfy.model_management", "TABLE") not in changed
    assert read[("comfy.model_management", "in_training")] == {"comfy/ldm/model.py:11"}
