"""The Comfy Registry archive: pyproject fields per the registry specification, and the node
archive built as ``comfy node pack`` builds it holds what the pack imports and nothing of the lab.

comfy-cli 1.23.0 (``comfy_cli/file_utils.py: zip_files``) zips ``git ls-files`` minus the
``.comfyignore`` patterns (gitwildmatch, via pathspec), then adds ``[tool.comfy] includes``. This
test does the same: with pathspec when it is installed, else with the subset of gitwildmatch that
``.comfyignore`` is held to (``dir/`` and ``path/file`` lines).
"""

from __future__ import annotations

import ast
import re
import shutil
import struct
import subprocess
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python 3.11")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
COMFY = PYPROJECT["tool"]["comfy"]
#: What a user's ComfyUI needs from the archive (the pack's entry points and what they serve).
REQUIRED = [
    "__init__.py", "prestartup_script.py", "pyproject.toml", "LICENSE", "README.md", "requirements.txt",
    "nodes/__init__.py", "web/bcg.js", "web/docs/BCGApply.md", "web/docs/BCGWarmupCapture.md",
    "scripts/bcg_client.py", "scripts/bcg_api_example.json", "docs/models.md", "bcg_client/__init__.py", "bcg_client/cli.py",
    "bcg_client/batch.py", "scripts/bcg_ray.py", "bcg_client/on_ray/cli.py", "bcg_runtime/plan.py",
]  # fmt: skip
LAB = ("tests/", ".ci/", ".github/", "scripts/gpu_suite.sh", "scripts/prepare_device_site.sh", "scripts/noflags_check.py",
       "scripts/prepare_device_ray.sh", "scripts/ray_gpu_check.py")  # fmt: skip


def _ignore_lines() -> list[str]:
    path = ROOT / ".comfyignore"
    lines = path.read_text().splitlines() if path.is_file() else []
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def _ignored(path: str, patterns: list[str]) -> bool:
    try:
        import pathspec
    except ImportError:
        pathspec = None
    if pathspec is not None:
        return pathspec.PathSpec.from_lines("gitwildmatch", patterns).match_file(path)
    for pattern in patterns:  # the subset test_comfyignore_uses_the_emulated_subset allows
        if pattern.endswith("/"):
            name = pattern.rstrip("/")
            parts = path.split("/")[:-1]
            if ("/" in name and path.startswith(name + "/")) or ("/" not in name and name in parts):
                return True
        elif "/" in pattern.strip("/"):
            if path == pattern.lstrip("/"):
                return True
        elif path.split("/")[-1] == pattern:
            return True
    return False


def _archive(tmp_path: Path) -> zipfile.ZipFile:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed: comfy node pack packs git-tracked files")
    result = subprocess.run([git, "-C", str(ROOT), "ls-files"], capture_output=True, text=True)
    if result.returncode != 0 or not result.stdout.strip():
        pytest.skip("not a git checkout: comfy node pack packs git-tracked files")
    patterns = _ignore_lines()
    out = tmp_path / "node.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in result.stdout.splitlines():
            if name and not _ignored(name, patterns) and (ROOT / name).is_file():
                archive.write(ROOT / name, name)
        for include in COMFY.get("includes", []):
            for path in sorted((ROOT / include).rglob("*")) if (ROOT / include).is_dir() else [ROOT / include]:
                if path.is_file() and not _ignored(path.relative_to(ROOT).as_posix(), patterns):
                    archive.write(path, path.relative_to(ROOT).as_posix())
    return zipfile.ZipFile(out)


def test_comfyignore_uses_the_emulated_subset():
    for line in _ignore_lines():
        assert not re.search(r"[*?\[\]!\\]", line), f".comfyignore: '{line}' is beyond the subset this test emulates"


def test_pyproject_has_the_registry_fields():
    project = PYPROJECT["project"]
    assert (
        re.fullmatch(r"[a-z][a-z0-9]*([-_.][a-z0-9]+)*", project["name"]) and "comfyui" not in project["name"].lower()
    )
    assert re.fullmatch(r"\d+\.\d+\.\d+", project["version"])
    assert COMFY["PublisherId"] and COMFY["DisplayName"]
    assert "Environment :: GPU :: NVIDIA CUDA" in project["classifiers"]
    urls = project["urls"]
    for key in ("Repository", "Documentation", "Bug Tracker", "Issues"):
        assert urls.get(key, "").startswith("https://"), key


def test_the_icon_is_a_square_png_in_the_repository_of_at_most_400px():
    url = COMFY["Icon"]
    repository = PYPROJECT["project"]["urls"]["Repository"].removeprefix("https://github.com/")
    prefix = f"https://raw.githubusercontent.com/{repository}/main/"
    assert url.startswith(prefix), f"Icon should be served from this repository: {prefix}..."
    data = (ROOT / url.removeprefix(prefix)).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width == height <= 400


def test_the_description_names_every_supported_family():
    from bcg_runtime.comfy.models import ADAPTERS

    description = PYPROJECT["project"]["description"]
    missing = [a.display_name for a in ADAPTERS if a.display_name not in description]
    assert not missing, f"pyproject description does not name {missing}"


def test_the_archive_holds_what_the_pack_imports_and_no_lab_files(tmp_path):
    names = set(_archive(tmp_path).namelist())
    assert not [n for n in REQUIRED if n not in names]
    assert not [n for n in names if n.startswith(LAB)], "lab files in the archive"
    templates = [n for n in names if n.startswith("example_workflows/")]
    assert any(n.endswith(".json") for n in templates) and all(
        n.rsplit(".", 1)[0] + ".jpg" in names for n in templates if n.endswith(".json")
    )

    # Every import of the pack's own modules, from every module in the archive, resolves in it
    # (the archive's root is the pack's package: ComfyUI imports it from custom_nodes/<folder>).
    def module_name(path: str) -> str:
        parts = path[:-3].split("/")
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    sources = sorted(n for n in names if n.endswith(".py"))
    modules = {module_name(n) for n in sources}
    unresolved = []
    for name in sources:
        package = module_name(name) if name.endswith("__init__.py") else module_name(name).rpartition(".")[0]
        for node in ast.walk(ast.parse((ROOT / name).read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join([*base, *([node.module] if node.module else [])])
                # `from .x import y`: x is a module of the archive, or y is (a submodule)
                if mod not in modules and not all(f"{mod}.{a.name}".lstrip(".") in modules for a in node.names):
                    unresolved.append(f"{name}: from {'.' * node.level}{node.module or ''} import ...")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
                for mod in mods:
                    if mod and mod.split(".")[0] in ("bcg_runtime", "nodes") and mod not in modules:
                        unresolved.append(f"{name}: import {mod}")
    assert not unresolved, unresolved


def test_the_archived_docs_link_only_to_archived_files(tmp_path):
    names = set(_archive(tmp_path).namelist())
    broken = []
    for name in sorted(n for n in names if n.endswith(".md")):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", (ROOT / name).read_text()):
            if re.match(r"[a-z]+:", target):
                continue
            resolved = (Path(name).parent / target).as_posix()
            resolved = re.sub(r"(^|/)[^/]+/\.\./", r"\1", resolved)
            if resolved.removeprefix("./") not in names:
                broken.append(f"{name} -> {target}")
    assert not broken, broken
