"""Every template in ``example_workflows/`` is a prompt this ComfyUI accepts: converted from the UI
graph to the API form the frontend submits and checked by ComfyUI's own
``execution.validate_prompt`` with its nodes registered by its own loader (``init_extra_nodes``
without custom or API nodes, then the pack through ``load_custom_node``). That proves what the
unit layer cannot: each node type exists in this ComfyUI, each widget value is one of its choices
or in its range, and each link joins outputs and inputs of one type. The model files are empty
placeholders in temporary folders (validation reads names, never files)."""

import asyncio
import json
from pathlib import Path

import pytest
from bcg_testing import ROOT

pytestmark = [pytest.mark.comfy, pytest.mark.smoke]
TEMPLATES = sorted((ROOT / "example_workflows").glob("*.json"))
#: The control the frontend adds after an INT widget such as a seed: saved, never submitted.
SEED_CONTROLS = ("fixed", "increment", "decrement", "randomize")
WIDGET_TYPES = ("INT", "FLOAT", "STRING", "BOOLEAN", "COMBO")


def widget_names(cls) -> list[str]:
    """The node's widgets in the order the frontend makes them (its INPUT_TYPES, required then
    optional; a list type is a combo; ``forceInput`` makes a socket)."""
    spec = cls.INPUT_TYPES()
    names = []
    for section in ("required", "optional"):
        for name, (kind, *options) in spec.get(section, {}).items():
            if (isinstance(kind, list) or kind in WIDGET_TYPES) and not (options and options[0].get("forceInput")):
                names.append(name)
    return names


def api_prompt(graph: dict, registry: dict) -> dict:
    """The UI graph as the API prompt the frontend would queue (Notes dropped): linked inputs as
    ``[source id, slot]``, widget values by the node's schema."""
    links = {link[0]: link for link in graph["links"]}
    out = {}
    for node in graph["nodes"]:
        if node["type"] == "Note":
            continue
        values = list(node.get("widgets_values") or [])
        inputs = {}
        for name in widget_names(registry[node["type"]]):
            if values:
                inputs[name] = values.pop(0)
                if values and values[0] in SEED_CONTROLS and isinstance(inputs[name], int):
                    values.pop(0)
        assert not values, f"node {node['id']} ({node['type']}) saves more widget values than it has widgets: {values}"
        for slot in node.get("inputs", []):
            if slot.get("link") is not None:
                _, src, src_slot, *_ = links[slot["link"]]
                inputs[slot["name"]] = [str(src), src_slot]
        out[str(node["id"])] = {"class_type": node["type"], "inputs": inputs}
    return out


@pytest.fixture(scope="module")
def registered(tmp_path_factory):
    """ComfyUI's nodes and the pack registered by ComfyUI's loaders; each template's model files
    present by name in their folders."""
    import folder_paths
    import nodes

    for path in TEMPLATES:
        for node in json.loads(path.read_text())["nodes"]:
            for model in node.get("properties", {}).get("models", []):
                folder = tmp_path_factory.mktemp(model["directory"])
                (folder / model["name"]).write_bytes(b"")
                folder_paths.add_model_folder_path(model["directory"], str(folder))
    if not getattr(nodes, "_bcg_zoo_import_failed", None):
        nodes._bcg_zoo_import_failed = (
            asyncio.run(nodes.init_extra_nodes(init_custom_nodes=False, init_api_nodes=False)) or []
        )
    assert asyncio.run(nodes.load_custom_node(str(ROOT)))
    return nodes.NODE_CLASS_MAPPINGS


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.stem)
def test_a_template_is_a_prompt_this_comfyui_accepts(registered, path):
    import execution

    graph = json.loads(path.read_text())
    missing = {n["type"] for n in graph["nodes"] if n["type"] != "Note"} - set(registered)
    assert not missing, f"{path.name}: node types this ComfyUI lacks: {sorted(missing)}"
    prompt = api_prompt(graph, registered)
    ok, error, outputs, node_errors = asyncio.run(execution.validate_prompt("bcg-template", prompt, None))
    assert ok and error is None and node_errors == {}, (error, node_errors)
    assert outputs, "the template has no output node"


def test_the_conversion_gives_the_api_twin(registered):
    """The Z-Image-Turbo template converts to scripts/bcg_api_example.json (the client's prompt)."""
    (template,) = [p for p in TEMPLATES if "Z-Image-Turbo" in p.name]
    twin = json.loads((Path(ROOT) / "scripts" / "bcg_api_example.json").read_text())
    assert api_prompt(json.loads(template.read_text()), registered) == {
        k: {"class_type": v["class_type"], "inputs": v["inputs"]} for k, v in twin.items()
    }
