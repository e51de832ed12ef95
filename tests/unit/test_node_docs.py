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


#: The default of an input whose default the source does not spell as a literal.
NOT_LITERAL = object()


def _nodes() -> dict[str, dict[str, object]]:
    """node id -> {input name: its literal default, None (no default) or NOT_LITERAL} from
    nodes/*.py's define_schema."""
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
                inputs[name] = (
                    None if default is None else default.value if isinstance(default, ast.Constant) else NOT_LITERAL
                )
            out[kwargs["node_id"].value] = inputs
    return out


NODES = _nodes()


def test_both_nodes_are_found():
    assert set(NODES) == {"BCGApply", "BCGWarmupCapture"}


#: An input's entry on a page: ``- **`name`** (default `value`): what it does`` (several names
#: may share one entry: ``- **`positive`**, **`negative`**: ...``). A list, not a table: the
#: node-docs panel is a narrow side panel, where a three-column table cannot be read.
ENTRY = re.compile(r"^- ((?:\*\*`[a-z_]+`\*\*(?:, )?)+)(?: \(default ([^)]*)\))?:", re.M)


def _entries(text: str) -> dict[str, str | None]:
    """input name -> the default its entry states (None where it states none)."""
    out = {}
    for m in ENTRY.finditer(text):
        for name in re.findall(r"`([a-z_]+)`", m.group(1)):
            out[name] = m.group(2)
    return out


def test_entries_are_read():
    assert _entries("- **`a_b`** (default `1,2`): x\n- **`c`**, **`d`**: y\n") == {"a_b": "`1,2`", "c": None, "d": None}


@pytest.mark.parametrize("node_id", sorted(NODES))
def test_a_node_page_documents_every_input_with_its_default(node_id):
    page = DOCS / f"{node_id}.md"
    assert page.is_file(), f"no {page.relative_to(ROOT)}: ComfyUI's node-docs panel would show nothing"
    entries = _entries(page.read_text())
    assert set(entries) == set(NODES[node_id]), (
        f"{node_id}: the page documents {sorted(entries)}, the node has {sorted(NODES[node_id])}"
    )
    for name, default in NODES[node_id].items():
        if default is NOT_LITERAL:
            assert entries[name], f"{node_id}.{name}: the page states no default"
            continue
        if default is None:
            assert entries[name] is None, f"{node_id}.{name}: the page states a default, the code has none"
            continue
        shown = {True: "on", False: "off"}[default] if isinstance(default, bool) else f"`{default}`"
        assert entries[name] == shown, f"{node_id}.{name}: page says {entries[name]}, the code {shown}"


@pytest.mark.parametrize("node_id", sorted(NODES))
def test_code_blocks_fit_the_panel(node_id):
    """The panel shows about 34 monospace characters a line at its default width; a longer line of
    a code block (the wiring diagrams) scrolls out of sight."""
    text = (DOCS / f"{node_id}.md").read_text()
    for block in re.findall(r"^```\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
            assert len(line) <= 34, f"{node_id}: code line too wide for the docs panel: {line!r}"
