"""The pack's templates: what ComfyUI's template browser lists (every ``*.json`` in
``example_workflows/``) opens as a graph, shows a thumbnail, and offers the models' downloads.

ComfyUI 0.33.0 (``app/custom_node_manager.py``) lists ``example_workflows/*.json`` by file name
and serves the folder under ``/api/workflow_templates/<pack>/``; its frontend (1.49.6) takes a
custom pack's template title and description from that file name and its thumbnail from
``<name>.jpg`` beside it. The Missing Models dialog reads ``properties.models`` (name, url,
directory) on a loader node, as ComfyUI's own templates carry it.
"""

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = sorted((ROOT / "example_workflows").glob("*.json"))
API_TWIN = ROOT / "scripts" / "bcg_api_example.json"
#: Loader node type -> (the models folder its first widgets name files in, how many files).
LOADERS = {
    "UNETLoader": ("diffusion_models", 1),
    "CLIPLoader": ("text_encoders", 1),
    "DualCLIPLoader": ("text_encoders", 2),
    "VAELoader": ("vae", 1),
    "CheckpointLoaderSimple": ("checkpoints", 1),
}


def test_there_is_a_template():
    assert TEMPLATES, "example_workflows/ holds no template"


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.stem)
def test_a_template_is_a_ui_workflow_with_a_thumbnail(path):
    graph = json.loads(path.read_text())
    assert isinstance(graph.get("nodes"), list) and isinstance(graph.get("links"), list), (
        f"{path.name} is not a UI-format workflow (an API-format one opens as an empty canvas): keep those in scripts/"
    )
    types = {n["type"] for n in graph["nodes"]}
    assert {"BCGApply"} <= types
    thumbnail = path.with_suffix(".jpg")
    assert thumbnail.is_file(), f"no thumbnail {thumbnail.name}: run python scripts/render_cards.py"
    assert thumbnail.read_bytes()[:3] == b"\xff\xd8\xff", f"{thumbnail.name} is not a JPEG"


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.stem)
def test_every_loader_carries_its_download(path):
    graph = json.loads(path.read_text())
    loaders = [n for n in graph["nodes"] if n["type"] in LOADERS]
    assert loaders
    for node in loaders:
        models = node.get("properties", {}).get("models")
        assert models, f"{node['type']} (node {node['id']}) has no properties.models"
        directory, files = LOADERS[node["type"]]
        assert [m["name"] for m in models] == node["widgets_values"][:files]
        for model in models:
            assert model["directory"] == directory
            assert model["url"].startswith("https://") and model["url"].endswith("/" + model["name"])


def test_the_api_twin_is_the_template():
    """scripts/bcg_api_example.json (what scripts/bcg_client.py submits by default) is the template
    in API format: the same node ids, types and widget inputs (the e2e browser test converts one
    into the other in a real frontend)."""
    (template,) = [p for p in TEMPLATES if "Z-Image-Turbo" in p.name]
    ui = {str(n["id"]): n for n in json.loads(template.read_text())["nodes"] if n["type"] != "Note"}
    api = json.loads(API_TWIN.read_text())
    assert {k: v["class_type"] for k, v in api.items()} == {k: n["type"] for k, n in ui.items()}
    for node_id, node in api.items():
        widgets = [v for v in node["inputs"].values() if not isinstance(v, list)]
        values = [v for v in ui[node_id].get("widgets_values") or [] if v not in ("fixed", "randomize")]
        assert widgets == values[: len(widgets)], node_id
