"""web/docs/<node id>.md: the page ComfyUI's node-docs panel shows for each node of the pack.

The frontend (comfyui-frontend-package 1.49.6, the one ComfyUI 0.33.0 pins) asks a custom pack for
``/extensions/<pack>/docs/<node id>/<locale>.md`` and falls back to ``.../docs/<node id>.md``;
``/extensions/<pack>/`` serves the pack's ``WEB_DIRECTORY`` (``web/``). Each page must document
every input of its node with the default the code gives it (read here from the node sources, so
the page cannot drift from them without this test failing).
"""

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "web" / "docs"


def _nodes() -> dict[str, dict[str, object]]:
    """node id -> {input name: its literal default, or None} from nodes/*.py's define_schema."""
    out = {}
    for path in sorted((ROOT / "nodes").glob("*.py")):
        for call in ast.walk(ast.parse(path.read_text())):
            if not isinstance(call, ast.Call):
                continue
            kwargs = {k.arg: k.value for k in call.keywords}
            if not isinstance(kwargs.get("node_id"), ast.Constant) or "inputs" not in kwargs:
                continue
            inputs = {}
            for item in kwargs["inputs"].elts:
                name = item.args[0].value
                default = next((k.value for k in item.keywords if k.arg == "default"), None)
                inputs[name] = default.value if isinstance(default, ast.Constant) else None
            out[kwargs["node_id"].value] = inputs
    return out


NODES = _nodes()


def test_both_nodes_are_found():
    assert set(NODES) == {"BCGApply", "BCGWarmupCapture"}


@pytest.mark.parametrize("node_id", sorted(NODES))
def test_a_node_page_documents_every_input_with_its_default(node_id):
    page = DOCS / f"{node_id}.md"
    assert page.is_file(), f"no {page.relative_to(ROOT)}: ComfyUI's node-docs panel would show nothing"
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z_]+)`[^|]*\| ([^|]*) \|", page.read_text(), re.M)}
    for name, default in NODES[node_id].items():
        assert name in rows or any(name in key for key in re.findall(r"^\| (`[^|]*`) \|", page.read_text(), re.M)), name
        if default is None or name not in rows:
            continue
        shown = {True: "on", False: "off"}.get(default, f"`{default}`") if isinstance(default, bool) else f"`{default}`"
        assert rows[name].strip() == shown, f"{node_id}.{name}: page says {rows[name].strip()}, the code {shown}"
