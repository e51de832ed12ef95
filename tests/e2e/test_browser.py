"""The frontend extension (web/bcg.js) in a real browser: ComfyUI's page loads the UI example,
a run of the same workflow (queued over HTTP) sends ``bcg.status``, and the BCG nodes get their
badge on the canvas; "BCG details" in a node's context menu shows the session.

Needs Debian's chromium (``apt-get install chromium``) and the ``playwright`` Python package (the
``browser`` fixture of conftest.py); no browser is downloaded. The screenshots go to
``$BCG_ARTIFACTS`` (or a temporary folder) and their paths are printed. The page as a user meets
it, screenshot by screenshot: test_ui_tour.py.
"""

import io
import time

import pytest

from e2e_setup import (
    APPLY_ID,
    COND_LENGTH,
    SIZE,
    STEPS,
    WARMUP_ID,
    call_label,
    count_colour,
    e2e_workflow,
    example,
    load_client,
)

pytestmark = pytest.mark.e2e
OFF_GREY = (0x61, 0x61, 0x61)
REPLAYED_GREEN = (0x2E, 0x7D, 0x32)
client = load_client()


def _client_xy(page, node_id: str, dx: float, dy: float) -> tuple[float, float]:
    """Page coordinates of the canvas point ``node.pos + (dx, dy)``."""
    return tuple(page.evaluate(
        """([id, dx, dy]) => {
            const n = app.graph.getNodeById(Number(id)), ds = app.canvas.ds;
            const r = app.canvas.canvas.getBoundingClientRect();
            return [(n.pos[0] + dx + ds.offset[0]) * ds.scale + r.left, (n.pos[1] + dy + ds.offset[1]) * ds.scale + r.top];
        }""",
        [node_id, dx, dy],
    ))  # fmt: skip


def _badge_pixels(page, node_id: str, colour: tuple[int, int, int]) -> int:
    """Pixels of ``colour`` in the strip above the node's title, where LiteGraph draws node badges
    (left or right aligned, depending on the frontend)."""
    from PIL import Image

    title_height = page.evaluate("() => LiteGraph.NODE_TITLE_HEIGHT")
    width = page.evaluate("id => app.graph.getNodeById(Number(id)).size[0]", node_id)
    x0, y0 = _client_xy(page, node_id, -20, -title_height - 30)
    x1, y1 = _client_xy(page, node_id, width + 20, -title_height)
    shot = Image.open(
        io.BytesIO(
            page.screenshot(
                clip={"x": max(0, x0), "y": max(0, y0), "width": x1 - max(0, x0), "height": y1 - max(0, y0)}
            )
        )
    )
    return count_colour(shot, "#" + "".join(f"{c:02x}" for c in colour))


def test_badges_and_details(comfy_server, browser, artifacts):
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(comfy_server.url)
    page.wait_for_function(
        "() => window.app?.graph && app.extensions?.some(e => e.name === 'bcg.status')", timeout=90_000
    )

    # The UI example loads with every node known, and converts to the API example.
    page.evaluate("wf => app.loadGraphData(wf)", example("ui"))
    unknown = page.evaluate(
        "() => app.graph._nodes.filter(n => !LiteGraph.registered_node_types[n.type]).map(n => n.type)"
    )
    assert unknown == []
    # Marked: only the loaders, whose models (properties.models) this server does not have.
    marked = page.evaluate("() => app.graph._nodes.filter(n => n.has_errors).map(n => n.type)")
    assert set(marked) <= {"UNETLoader", "CLIPLoader", "VAELoader"}, marked
    converted = page.evaluate("async () => (await app.graphToPrompt()).output")
    strip = lambda prompt: {k: (v["class_type"], v["inputs"]) for k, v in prompt.items()}  # noqa: E731
    assert strip(converted) == strip(example("api"))

    # A run of the same workflow (same node ids) sends bcg.status; the badges follow.
    client.queue(comfy_server.url, e2e_workflow(seed=int(time.time())), "bcg-browser-test")
    page.wait_for_function(
        "ids => ids.every(id => app.graph.getNodeById(Number(id))?.bcgStatus?.last_run)",  # the warm-up's event comes first
        arg=[APPLY_ID, WARMUP_ID],
        timeout=600_000,
    )
    badges = page.evaluate("ids => ids.map(id => app.graph.getNodeById(Number(id)).bcgBadge)", [APPLY_ID, WARMUP_ID])
    for badge in badges:  # grey "off" on a CPU server, green "replayed" on CUDA
        if comfy_server.cuda:
            assert badge["state"] == "replayed" and badge["text"] == f"BCG replayed {STEPS}/{STEPS}", badge
        else:
            assert badge["state"] == "off" and badge["text"] == "BCG off: no CUDA" and badge["bg"] == "#616161"
    assert page.evaluate("id => app.graph.getNodeById(Number(id)).bcgStatus.last_run.calls", APPLY_ID) == STEPS

    # ...and are drawn: the strip above each node's title holds the state's colour.
    page.wait_for_timeout(300)
    colour = REPLAYED_GREEN if comfy_server.cuda else OFF_GREY
    for node_id in (APPLY_ID, WARMUP_ID):
        assert _badge_pixels(page, node_id, colour) > 100, f"no {colour} badge drawn on node {node_id}"

    path = artifacts / "bcg_badges.png"
    page.screenshot(path=str(path))
    print(f"\nscreenshot: {path}")

    # "BCG details" in the node's context menu opens the session's details.
    title_height = page.evaluate("() => LiteGraph.NODE_TITLE_HEIGHT")
    x, y = _client_xy(page, APPLY_ID, 80, -title_height / 2)
    page.mouse.click(x, y, button="right")
    page.get_by_text("BCG details", exact=True).first.click()
    details = page.locator("#bcg-details")
    details.wait_for(state="visible")
    text = details.inner_text()
    headings = [h.upper() for h in details.locator("h3").all_inner_texts()]
    assert headings[:2] == ["STATUS", "LAST RUN"], headings
    if comfy_server.cuda:
        assert (
            "BCG is off" not in text and "CAPTURED GRAPHS (" in text.upper() and call_label(SIZE, COND_LENGTH) in text
        ), text
    else:
        assert "BCG is off: no CUDA" in text and "CAPTURED GRAPHS (0)" in headings and "Graph memory 0.0 MiB" in text, (
            text
        )
        assert f"{STEPS} DiT calls: 0 replayed, {STEPS} eager" in text and "(the reason above)" in text, text
        assert text.count("no CUDA") == 1, text  # the reason once; the eager row points to it
    path = artifacts / "bcg_details.png"
    page.screenshot(path=str(path))
    print(f"screenshot: {path}")
    details.get_by_text("Close").click()

    # The other two badges, from events as a GPU run would send them.
    for node_id, run, text, colour in (
        (APPLY_ID, {"replayed": 16, "calls": 16, "eager": {}, "state": "replayed"}, "BCG replayed 16/16", (0x2E, 0x7D, 0x32)),
        (WARMUP_ID, {"replayed": 14, "calls": 16, "eager": {"not captured: 640x512 txt40 b1": 2},
                     "eager_kinds": {"not captured: 640x512 txt40 b1": "not_captured"}, "state": "partial"},
         "BCG 14/16 · 2 not captured", (0xF0, 0xA0, 0x20)),
    ):  # fmt: skip
        status = {
            "id": "fake",
            "node_ids": [node_id],
            "disabled": None,
            "last_run": {**run, "summary": ""},
            "captured": [],
        }
        page.evaluate("s => comfyAPI.api.api.dispatchCustomEvent('bcg.status', s)", status)
        assert page.evaluate("id => app.graph.getNodeById(Number(id)).bcgBadge.text", node_id) == text
        page.wait_for_timeout(300)
        assert _badge_pixels(page, node_id, colour) > 100, f"badge of node {node_id} not drawn in {colour}"
    path = artifacts / "bcg_badge_states.png"
    page.screenshot(path=str(path))
    print(f"screenshot: {path}")
    assert errors == [], f"page errors: {errors}"
    page.close()
