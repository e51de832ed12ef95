"""Trees, keys and the pack's import-time contracts."""

import ast
import importlib
import pathlib
import sys
from collections import namedtuple

import pytest
import torch

from bcg_runtime.core.runner import GraphRunner
from bcg_runtime.core.stats import summarize_run
from bcg_runtime.core.graph import borrowed_view
from bcg_runtime.core.trees import (
    ReplayDivergence,
    UnkeyableArgument,
    clone_tree,
    copy_tree_into,
    flatten_inputs,
    map_tensors,
    unflatten_inputs,
)

pytestmark = pytest.mark.unit
ROOT = pathlib.Path(__file__).resolve().parents[2]

Pair = namedtuple("Pair", "a b")


def test_flatten_unflatten_round_trip_keeps_structure():
    tree = ((torch.ones(2), Pair(torch.zeros(1), 3)), {"k": [torch.ones(3, 2).t(), None, 1.5]})
    leaves, structure = flatten_inputs(tree)
    assert len(leaves) == 3
    rebuilt = unflatten_inputs(tree, [t + 1 for t in leaves])
    assert isinstance(rebuilt[0][1], Pair) and rebuilt[0][1].b == 3
    assert torch.equal(rebuilt[1]["k"][0], torch.ones(2, 3) + 1)
    assert flatten_inputs(rebuilt)[1] == structure  # same shapes, dtypes, strides, constants


@pytest.mark.parametrize(
    "other",
    [
        ((torch.ones(3),), {}),  # shape
        ((torch.ones(2, dtype=torch.float64),), {}),  # dtype
        ((torch.ones(4)[::2],), {}),  # strides
        ((torch.ones(2),), {"flag": True}),  # a new constant
    ],
)
def test_keys_differ_for_anything_a_kernel_sees(other):
    assert flatten_inputs(((torch.ones(2),), {}))[1] != flatten_inputs(other)[1]


def test_nan_constants_key_stably():
    assert flatten_inputs(float("nan"))[1] == flatten_inputs(float("nan"))[1]


@pytest.mark.parametrize(
    ("tree", "path"),
    [
        (((torch.ones(1), [2, object()]), {}), "args[0][1][1]"),
        (((), {"x": torch.ones(1), "opts": {"inner": (1, object())}}), "args[1]['opts']['inner'][1]"),
        (((), {"opts": {1: 3, (1, object()): 4}}), "args[1]['opts'] key (1, <object"),
    ],
)
def test_an_unkeyable_argument_is_named_by_where_it_sits(tree, path):
    with pytest.raises(UnkeyableArgument) as raised:
        flatten_inputs(tree)
    assert raised.value.path.startswith(path), raised.value.path


def test_copy_tree_into_refuses_divergent_structure():
    dst = (torch.zeros(2), 3)
    copy_tree_into(dst, (torch.ones(2), 3))
    assert torch.equal(dst[0], torch.ones(2))
    with pytest.raises(ReplayDivergence, match=r"output\[1\]"):
        copy_tree_into(dst, (torch.ones(2), 4))
    with pytest.raises(ReplayDivergence, match="float32\\[3\\]"):
        copy_tree_into(dst, (torch.ones(3), 3))


def test_clone_tree_keeps_types():
    out = clone_tree({"x": Pair(torch.ones(1), "s")})
    assert isinstance(out["x"], Pair) and out["x"].b == "s"


def test_runner_on_cpu_without_stand_in_says_why():
    runner = GraphRunner()
    result = runner.capture(lambda x: x + 1, (torch.ones(2),))
    assert not result.ok and "CUDA graphs need CUDA tensors" in result.reason
    assert torch.equal(runner(lambda x: x + 1, (torch.ones(2),)), torch.full((2,), 2.0))


def test_summary_line():
    from collections import Counter

    assert summarize_run(3, Counter()) == "replayed 3/3 calls"
    assert (
        summarize_run(14, Counter({"not captured: 640x512": 2}))
        == "replayed 14/16 calls; eager: 2x not captured: 640x512"
    )


def test_core_never_imports_comfy():
    for path in (ROOT / "bcg_runtime" / "core").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top not in {"comfy", "comfy_api", "comfy_extras", "nodes", "folder_paths", "server"}, (
                    f"{path.name} imports {name}"
                )


def test_pack_init_imports_without_comfyui_and_exports_only_the_entrypoint():
    spec = importlib.util.spec_from_file_location(
        "bcg_pack_under_test", ROOT / "__init__.py", submodule_search_locations=[str(ROOT)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    assert sorted(module.__all__) == ["WEB_DIRECTORY", "comfy_entrypoint"]
    assert not hasattr(module, "NODE_CLASS_MAPPINGS")  # ComfyUI would take the V1 branch and skip the entrypoint
    assert (ROOT / module.WEB_DIRECTORY.lstrip("./")).is_dir()


def test_requirements_never_pin_torch():
    lines = [line.split("#")[0].strip().lower() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    assert not any(line.startswith(("torch", "torchvision", "torchaudio")) for line in lines)


def test_status_json_never_holds_non_finite_floats():
    """The browser's JSON parser rejects Infinity/NaN; a whole bcg.status event would be lost."""
    import json

    from bcg_runtime.comfy.events import jsonable

    payload = jsonable({"records": [{"max_abs_diff": float("inf")}, {"max_abs_diff": float("nan")}], "t": (1.5,)})
    assert json.loads(json.dumps(payload, allow_nan=False)) == {
        "records": [{"max_abs_diff": "inf"}, {"max_abs_diff": "nan"}],
        "t": [1.5],
    }


def test_map_tensors_rebuilds_containers_and_only_maps_objects_when_asked():
    class Out:
        def __init__(self, sample):
            self.sample = sample

    tree = ({"a": [torch.ones(2)], "n": 3}, Pair(torch.zeros(1), "s"), Out(torch.ones(1)))
    mapped = map_tensors(tree, lambda t: t + 1)
    assert torch.equal(mapped[0]["a"][0], torch.full((2,), 2.0)) and mapped[0]["n"] == 3
    assert isinstance(mapped[1], Pair) and torch.equal(mapped[1].a, torch.ones(1))
    assert mapped[2] is tree[2]  # objects untouched by default
    deep = map_tensors(tree, lambda t: t + 1, objects=True)
    assert deep[2] is not tree[2] and torch.equal(deep[2].sample, torch.full((1,), 2.0))


def test_borrowed_view_is_the_same_memory_and_layout():
    base = torch.arange(24.0).reshape(4, 6)
    t = base[1:, ::2]
    view = borrowed_view(t)
    assert view.data_ptr() == t.data_ptr() and view.stride() == t.stride() and view.shape == t.shape
    view.fill_(-1)
    assert bool((t == -1).all()) and base[0, 0] == 0


def test_cuda_malloc_async_is_refused_with_the_flag_that_fixes_it(monkeypatch):
    from bcg_runtime.comfy import guards

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_allocator_backend", lambda: "cudaMallocAsync")
    assert "--disable-cuda-malloc" in guards.allocator_refusal()
    monkeypatch.setattr(torch.cuda, "get_allocator_backend", lambda: "native")
    assert guards.allocator_refusal() is None


# ---------------------------------------------------------------- the layout's rules (docs/architecture.md)
#: The product: what ComfyUI imports (the pack's entry points, the nodes, the runtime).
PRODUCT = ("__init__.py", "prestartup_script.py", "nodes", "bcg_runtime")
#: Tools beside the product, which the product never imports.
TOOLS = {"bench", "scripts", "tests", "bcg_client"}


def _python_files(*names: str) -> list[pathlib.Path]:
    files = []
    for name in names:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return files


def _imports(path: pathlib.Path) -> list[tuple[int, str]]:
    """(level, module) of every import in ``path``: level 0 for absolute imports, else the dots."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(0, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append((node.level, node.module or ""))
    return out


def test_the_product_never_imports_the_tools():
    offending = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in _python_files(*PRODUCT)
        for level, module in _imports(path)
        if level == 0 and module.split(".")[0] in TOOLS
    ]
    assert not offending, offending


def test_no_product_module_is_over_400_lines():
    """House v2: a module the next engineer can hold in mind has one job and fits 400 lines."""
    long = {
        str(p.relative_to(ROOT)): n for p in _python_files(*PRODUCT) if (n := len(p.read_text().splitlines())) > 400
    }
    assert not long, long


def test_the_runtime_has_one_import_name():
    """Inside the pack everything imports ``bcg_runtime`` by that name (the pack's ``__init__``
    registers it once): a relative import reaching it through the pack's package (``..bcg_runtime``,
    ``.bcg_runtime``) would be a second copy of every module's state."""
    offending = [
        f"{path.relative_to(ROOT)}: from {'.' * level}{module} import ..."
        for path in _python_files("__init__.py", "nodes", "bench")
        for level, module in _imports(path)
        if level and module.split(".")[0] == "bcg_runtime"
    ]
    assert not offending, offending


def test_test_modules_have_distinct_names():
    """pytest imports test modules by their file name (no ``__init__.py`` in tests/): two files of
    one name in different layers stop the whole run at collection ("import file mismatch")."""
    seen: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not clashes, f"rename one of each: {clashes}"


def test_the_nodes_reach_the_runtime_only_through_api():
    offending = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in _python_files("nodes")
        for level, module in _imports(path)
        if level == 0
        and module.split(".")[0] == "bcg_runtime"
        and module != "bcg_runtime.comfy.api"
        and module != "bcg_runtime.comfy"  # `from bcg_runtime.comfy import api`
    ]
    assert not offending, offending


def test_the_architecture_page_names_every_module_and_only_modules_that_exist():
    """docs/architecture.md's list of modules matches the tree: every module of the product and of
    the benchmark (a family's adapter through ``models/<family>.py``) is named there, and every
    ``name.py`` it names exists (a pattern such as ``comfy_*.py`` matches at least one)."""
    import fnmatch
    import re

    doc = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`(?:[\w/]+/)?([\w*<>]+\.(?:py|js))", doc))
    patterns = [name.replace("<family>", "*") for name in named]
    families = ROOT / "bcg_runtime" / "comfy" / "models"
    modules = [
        p for p in _python_files("bcg_runtime", "nodes", "bench")
        if p.name != "__init__.py" and not (p.parent == families and p.name != "base.py")
        and "recipes" not in p.parts
    ]  # fmt: skip
    unnamed = [str(p.relative_to(ROOT)) for p in modules if not any(fnmatch.fnmatch(p.name, n) for n in patterns)]
    assert not unnamed, f"name these in docs/architecture.md: {unnamed}"
    scripts = [p for d in ("web", "nodes") for p in (ROOT / d).rglob("*.js")]
    tree = {p.name for p in _python_files(*PRODUCT, *TOOLS) + scripts}
    stale = sorted(n for n, pattern in zip(named, patterns) if not fnmatch.filter(tree, pattern))
    assert not stale, f"docs/architecture.md names modules that do not exist: {stale}"


#: What the tools may import of the ComfyUI glue: the facade, the model adapters and warm-up facts
#: (the recipes in bench/recipes/ read them), the sampling helpers the warm-up uses too, and the
#: process settings that pick kernels; the rest is the product's inside.
TOOLS_REACH = (
    "bcg_runtime.comfy.api",
    "bcg_runtime.comfy.models",
    "bcg_runtime.comfy.sampling",
    "bcg_runtime.comfy.kernel_settings",  # bench.not_exact records the settings that pick kernels
)


def _glue_modules(path: pathlib.Path) -> list[str]:
    """The ``bcg_runtime.comfy`` modules ``path`` imports, ``from bcg_runtime.comfy import x`` as ``bcg_runtime.comfy.x``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.startswith("bcg_runtime.comfy.")]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module == "bcg_runtime.comfy":
            out += [f"bcg_runtime.comfy.{a.name}" for a in node.names]
        elif (
            isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("bcg_runtime.comfy.")
        ):
            out.append(node.module)
    return out


def test_the_bench_reaches_the_glue_only_through_api():
    offending = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in _python_files("bench")
        for module in _glue_modules(path)
        if not module.startswith(TOOLS_REACH)
    ]
    assert not offending, offending


def test_core_never_imports_the_glue_or_the_models():
    """``core/`` is the generic runtime: the ComfyUI glue and the model adapters (where each family's
    quirks live) build on it, never the other way round."""
    offending = [
        f"{path.relative_to(ROOT)}: from {'.' * level}{module} import ..."
        for path in _python_files("bcg_runtime/core")
        for level, module in _imports(path)
        if (level >= 2 and module.split(".")[0] == "comfy") or module.startswith("bcg_runtime.comfy")
    ]
    assert not offending, offending


def test_each_recipe_takes_its_facts_from_its_adapter():
    """One fact in one place: the latent's scales are the family's adapter's, the text encoder's
    widths, default prompt length and extras and the latent's channels its module's warm-up facts
    (``FACTS``); each recipe (``bench/recipes/<name>.py``, named as its product module) names that
    module's ``ADAPTER`` and ``FACTS`` rather than repeating them, and the product knows each
    recipe's name (``by_family``, ``warmup_facts``) without importing the bench."""
    import dataclasses

    from bcg_runtime.comfy import models
    from bench.recipe import FamilyInfo
    from bench.recipes import RECIPE_MODULES

    repeated = {f.name for f in dataclasses.fields(FamilyInfo)} & {
        f.name for f in dataclasses.fields(models.WarmupFacts)
    }
    assert not repeated, f"FamilyInfo repeats the warm-up facts {sorted(repeated)}: read them from facts="
    family_modules = {m.__name__.rpartition(".")[2]: m for m in models.FAMILY_MODULES}
    recipes = {m.__name__.rpartition(".")[2]: m.RECIPE for m in RECIPE_MODULES}
    assert recipes.keys() == family_modules.keys(), "one recipe per family module, named alike"
    for name, recipe in recipes.items():
        module = family_modules[name]
        assert recipe.name == name, f"bench/recipes/{name}.py: its RECIPE is named {recipe.name!r}"
        assert recipe.adapter is module.ADAPTER, f"{name}: give RECIPE adapter=ADAPTER (its product module's)"
        assert recipe.facts is module.FACTS, f"{name}: give RECIPE facts=FACTS (its product module's)"
        assert models.by_family(name) is recipe.adapter and models.warmup_facts(name) is recipe.facts, name
        assert (recipe.latent_downscale, recipe.temporal_downscale) == (
            module.ADAPTER.latent_scale,
            module.ADAPTER.temporal_scale,
        )
    for adapter in models.ADAPTERS:  # a family's name is its own module's
        assert family_modules[adapter.family].ADAPTER is adapter, adapter.family


def test_a_static_buffer_keeps_a_gapped_views_strides():
    """A joint latent's stream at batch 2 is a view with gaps (batch stride over both streams):
    its buffer keeps those strides, so captured kernels see eager's layout (LTX-2's single-frame
    b2 capture differed by a rounding when the buffer was contiguous)."""
    import torch

    from bcg_runtime.core.trees import make_static_buffer

    packed = torch.randn(2, 640)
    video = packed[:, :512].view(2, 128, 1, 2, 2)
    buf = make_static_buffer(video)
    assert buf.stride() == video.stride() == (640, 4, 4, 2, 1) and torch.equal(buf, video)
    assert make_static_buffer(torch.randn(3, 1).expand(3, 4)).stride() == (4, 1)  # overlapping: contiguous
