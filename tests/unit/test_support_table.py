"""docs/models.md is what scripts/gen_support_table.py generates from the adapters."""

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("gen_support_table", ROOT / "scripts" / "gen_support_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_models_md_is_generated_from_the_adapters():
    tool = _tool()
    assert (ROOT / "docs" / "models.md").read_text() == tool.table(), (
        "docs/models.md is stale: run python scripts/gen_support_table.py"
    )


def test_every_adapter_has_a_row():
    from bcg_runtime.comfy.models import ADAPTERS

    text = _tool().table()
    for adapter in ADAPTERS:
        assert f"**{adapter.display_name}**" in text


def test_every_class_not_served_is_named_with_its_reason():
    from bcg_runtime.comfy.models import OUT_OF_SCOPE, UNSUPPORTED

    text = _tool().table()
    for name in {**UNSUPPORTED, **OUT_OF_SCOPE}:
        assert f"- `{name}`: " in text, name


@pytest.mark.parametrize(
    "model", ["Qwen-Image", "Qwen-Image-2512", "Z-Image", "Z-Image-Turbo", "GLM-Image", "Ideogram 4"]
)
def test_every_model_of_sglangs_diffusion_bcg_keeps_a_row(model):
    """The pack's origin: each model SGLang's diffusion BCG serves is in the table, served or with
    why not (GLM-Image: no ComfyUI class)."""
    rows = [line for line in _tool().table().splitlines() if line.startswith(("| **", "- **"))]
    assert any(model in line for line in rows), model
