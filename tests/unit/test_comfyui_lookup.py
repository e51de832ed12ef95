"""tests/comfyui_path.py: the comfy and e2e layers find the ComfyUI the pack sits in by themselves;
``COMFYUI_PATH`` still overrides."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from comfyui_path import PACK_ROOT, find_comfyui, is_comfyui  # noqa: E402

pytestmark = pytest.mark.unit


def _comfyui(root: Path) -> Path:
    (root / "comfy").mkdir(parents=True)
    (root / "main.py").write_text("")
    (root / "custom_nodes").mkdir()
    return root


def test_the_pack_in_custom_nodes_finds_its_comfyui(tmp_path):
    comfy = _comfyui(tmp_path / "ComfyUI")
    pack = comfy / "custom_nodes" / "ComfyUI-BCG"
    pack.mkdir()
    assert find_comfyui({}, pack) == str(comfy)


def test_comfyui_path_overrides_the_lookup(tmp_path):
    comfy = _comfyui(tmp_path / "ComfyUI")
    pack = comfy / "custom_nodes" / "ComfyUI-BCG"
    pack.mkdir()
    assert find_comfyui({"COMFYUI_PATH": "/elsewhere/ComfyUI"}, pack) == "/elsewhere/ComfyUI"
    assert find_comfyui({"COMFYUI_PATH": ""}, pack) == str(comfy)  # empty counts as unset


def test_a_linked_pack_is_found_from_its_link_and_from_its_target(tmp_path):
    comfy = _comfyui(tmp_path / "ComfyUI")
    checkout = tmp_path / "src" / "ComfyUI-BCG"
    checkout.mkdir(parents=True)
    link = comfy / "custom_nodes" / "ComfyUI-BCG"
    link.symlink_to(checkout, target_is_directory=True)
    assert find_comfyui({}, link) == str(comfy)  # the checkout itself is not in a ComfyUI
    assert find_comfyui({}, checkout) is None
    # pytest names the checkout by its real path; the shell's $PWD still names the link
    assert find_comfyui({"PWD": str(link / "tests")}, checkout) == str(comfy)
    assert find_comfyui({"PWD": str(tmp_path)}, checkout) is None


@pytest.mark.parametrize("missing", ["main.py", "comfy"])
def test_a_folder_without_main_py_and_comfy_is_not_comfyui(tmp_path, missing):
    comfy = _comfyui(tmp_path / "ComfyUI")
    target = comfy / missing
    target.rmdir() if target.is_dir() else target.unlink()
    pack = comfy / "custom_nodes" / "ComfyUI-BCG"
    pack.mkdir()
    assert not is_comfyui(comfy)
    assert find_comfyui({}, pack) is None


def test_this_checkout_linked_into_a_comfyui_finds_it(tmp_path):
    """The module's own PACK_ROOT, imported through a custom_nodes link as pytest would."""
    comfy = _comfyui(tmp_path / "ComfyUI")
    link = comfy / "custom_nodes" / "ComfyUI-BCG"
    link.symlink_to(PACK_ROOT, target_is_directory=True)
    code = "import sys; sys.path.insert(0, sys.argv[1]); from comfyui_path import find_comfyui; print(find_comfyui({}))"
    env = {k: v for k, v in os.environ.items() if k != "COMFYUI_PATH"}
    out = subprocess.run(
        [sys.executable, "-c", code, str(link / "tests")], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == str(comfy)


def test_the_conftest_exports_what_it_found():
    if find_comfyui({k: v for k, v in os.environ.items() if k != "COMFYUI_PATH"}, PACK_ROOT) is None:
        pytest.skip("this checkout is not inside a ComfyUI/custom_nodes folder")
    assert os.environ.get("COMFYUI_PATH")  # what it found, or the override
