"""The pack as a user meets it in ComfyUI's page, in headless Chromium, with screenshots.

One page goes through what a new user touches, in order, and each step asserts what its screenshot
is meant to show:

1. the template browser's ComfyUI-BCG category lists every ``example_workflows/*.json`` by title,
   with its thumbnail loaded, and nothing else (no API-format twin);
2. each template opens as its graph (every node known, not an empty canvas), and the Missing
   Models panel offers a download for each of its loaders' models;
3. the node-docs panel ("Node Info" of the selection toolbox) shows ``web/docs/<node id>.md`` for
   both nodes, fetched from the pack's web folder; the node search finds both by "speed"; on a
   server without CUDA a template's BCG nodes say "BCG off: no CUDA" before any run;
4. a run of the e2e workflow (queued from the page) puts the status badge on both BCG nodes on the
   classic LiteGraph canvas ...
5. ... and "BCG details" in a node's context menu opens the details dialog, in sections;
6. with Nodes 2.0 (``Comfy.VueNodes.Enabled``) a second run's badge is shown in both nodes' badge
   rows; the two GPU states (replayed, partial), sent as the server sends them, are shown too;
7. a bad ``resolutions`` is rejected by validation as one error on that input alone, and the
   errors panel names it with the message;
8. a value only the model can judge (a frame count for an image model) stops the warm-up with one
   line (ComfyUI's "Execution Blocked", no traceback) and the badge names the input.

Screenshots go to ``<artifacts>/ui_tour/<frontend version>/NN_<name>.png``, with ``shots.json``
(file -> what it shows). The frontend is whatever the server serves: ComfyUI's pinned
``comfyui-frontend-package``, or another one put first on the server's ``PYTHONPATH``
(docs/testing.md). Needs Debian's chromium and the ``playwright`` Python package (nothing is
downloaded). The tests run in file order and share the page; a later step does not rely on an
earlier one having passed, only on the page being up.
"""

from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path

import pytest

from e2e_setup import APPLY_ID, PACK_DIR, ROOT, SAMPLER_ID, STEPS, WARMUP_ID, count_colour, e2e_workflow

pytestmark = pytest.mark.e2e

TEMPLATES = sorted((ROOT / "example_workflows").glob("*.json"))
DOCS = ROOT / "web" / "docs"
BCG_IDS = (APPLY_ID, WARMUP_ID)
#: A resolutions value validation rejects from its text, and the message it gives.
BAD_RESOLUTIONS = "512x"
BAD_MESSAGE = "resolutions: '512x' is not WIDTHxHEIGHT"
#: A value only the model can judge: a frame count on Z-Image, an image model.
RUN_TIME_RESOLUTIONS = "64x64x5"
#: The badge colours of web/bcg.js (COLORS).
COLOURS = {"replayed": "#2e7d32", "partial": "#f0a020", "off": "#616161", "ready": "#1565c0", "error": "#c62828"}


class Tour:
    """The page, its errors and the numbered screenshots of the tour."""

    def __init__(self, page, server, root: Path):
        self.page = page
        self.server = server
        self.errors: list[str] = []
        self.responses: dict[str, int] = {}
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("response", lambda r: self.responses.__setitem__(r.url, r.status))
        page.goto(server.url)
        page.wait_for_function(
            "() => window.app?.graph && app.extensions?.some(e => e.name === 'bcg.status')", timeout=120_000
        )
        self.version = page.evaluate("() => window.__COMFYUI_FRONTEND_VERSION__ ?? 'unknown'")
        self.out = root / "ui_tour" / self.version
        self.out.mkdir(parents=True, exist_ok=True)
        for old in self.out.glob("*.png"):
            old.unlink()
        self.shots: list[dict] = []
        self.set("Comfy.VueNodes.Enabled", False)

    def shot(self, name: str, shows: str, **kwargs) -> Path:
        path = self.out / f"{len(self.shots) + 1:02d}_{name}.png"
        self.page.screenshot(path=str(path), **kwargs)
        self.shots.append({"file": path.name, "shows": shows})
        (self.out / "shots.json").write_text(json.dumps({"frontend": self.version, "shots": self.shots}, indent=1))
        print(f"\nscreenshot: {path}")
        return path

    def set(self, setting: str, value) -> None:
        self.page.evaluate("([id, v]) => app.extensionManager.setting.set(id, v)", [setting, value])

    def command(self, command: str) -> None:
        self.page.evaluate("c => app.extensionManager.command.execute(c)", command)

    def close_panels(self) -> None:
        """Close dialogs, the properties panel and toasts, whatever an earlier step left open."""
        page = self.page
        page.keyboard.press("Escape")
        page.wait_for_timeout(200)
        if self.panel_open():
            page.get_by_role("button", name="Toggle properties panel").first.click()
        for close in page.locator(".p-toast-close-button").all():
            if close.is_visible():
                close.click()
        page.mouse.move(5, 500)  # no tooltip of a button left under the pointer
        page.wait_for_timeout(300)

    def panel_open(self) -> bool:
        """Whether the properties panel (right side: workflow overview or a node's tabs) is open."""
        return any(t.is_visible() for t in self.page.get_by_text("Parameters", exact=True).all())

    def load(self, kind: str, graph: dict, name: str = "bcg tour") -> None:
        """Open ``graph`` (a UI workflow or an API prompt) in a new tab of the page."""
        if kind == "ui":
            self.page.evaluate("g => app.loadGraphData(g, true, true, null)", graph)
        else:
            self.page.evaluate("([p, n]) => app.loadApiJson(p, n)", [graph, name])
        self.page.wait_for_timeout(800)

    def frame(self, ids, scale: float = 1.0, dy: float = 0.0) -> None:
        """Centre the canvas on the nodes ``ids`` at ``scale``."""
        self.page.evaluate(
            """([ids, scale, dy]) => {
                const nodes = ids.map(i => app.graph.getNodeById(Number(i))), c = app.canvas;
                const x0 = Math.min(...nodes.map(n => n.pos[0])), x1 = Math.max(...nodes.map(n => n.pos[0] + n.size[0]));
                const y0 = Math.min(...nodes.map(n => n.pos[1])), y1 = Math.max(...nodes.map(n => n.pos[1] + n.size[1]));
                const r = c.canvas.getBoundingClientRect();
                c.ds.scale = scale;
                c.ds.offset[0] = r.width / 2 / scale - (x0 + x1) / 2;
                c.ds.offset[1] = r.height / 2 / scale - (y0 + y1) / 2 + dy;
                c.setDirty(true, true);
            }""",
            [list(ids), scale, dy],
        )  # fmt: skip
        self.page.wait_for_timeout(500)

    def queue(self) -> dict:
        """Queue the open workflow as the Run button does; the POST /prompt answer."""
        with self.page.expect_response(
            lambda r: r.url.endswith("/prompt") and r.request.method == "POST", timeout=60_000
        ) as answer:
            self.page.evaluate("() => app.queuePrompt(0, 1)")
        return answer.value.json()

    def wait_status(self, timeout: float = 600_000) -> None:
        self.page.wait_for_function(
            "ids => ids.every(id => app.graph.getNodeById(Number(id))?.bcgStatus?.last_run)",
            arg=list(BCG_IDS),
            timeout=timeout,
        )

    def wait_idle(self, timeout: float = 600) -> None:
        """Wait until the server's queue is empty (the run after the sampler: decode, save)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            queue = self.page.evaluate("async () => (await fetch('/api/queue')).json()")
            if not queue["queue_running"] and not queue["queue_pending"]:
                self.page.wait_for_timeout(500)
                return
            self.page.wait_for_timeout(300)
        raise AssertionError("the queue did not empty")

    def badges(self) -> dict[str, dict]:
        return self.page.evaluate(
            "ids => Object.fromEntries(ids.map(id => [id, app.graph.getNodeById(Number(id)).bcgBadge]))", list(BCG_IDS)
        )

    def set_widget(self, node_id: str, name: str, value) -> None:
        self.page.evaluate(
            "([id, name, v]) => { app.graph.getNodeById(Number(id)).widgets.find(w => w.name === name).value = v }",
            [node_id, name, value],
        )

    def badge_pixels(self, node_id: str, colour: str) -> int:
        """Pixels of ``colour`` in the strip above the node's title on the classic canvas, where
        LiteGraph draws node badges."""
        from PIL import Image

        box = self.page.evaluate(
            """id => {
                const n = app.graph.getNodeById(Number(id)), ds = app.canvas.ds, r = app.canvas.canvas.getBoundingClientRect();
                const t = LiteGraph.NODE_TITLE_HEIGHT, at = (x, y) => [(x + ds.offset[0]) * ds.scale + r.left, (y + ds.offset[1]) * ds.scale + r.top];
                const [x0, y0] = at(n.pos[0] - 20, n.pos[1] - t - 30), [x1, y1] = at(n.pos[0] + n.size[0] + 20, n.pos[1] - t);
                return {x: Math.max(0, x0), y: Math.max(0, y0), width: x1 - Math.max(0, x0), height: y1 - Math.max(0, y0)};
            }""",
            node_id,
        )  # fmt: skip
        return count_colour(Image.open(io.BytesIO(self.page.screenshot(clip=box))), colour)


@pytest.fixture(scope="module")
def tour(comfy_server, browser, artifacts):
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    tour = Tour(page, comfy_server, artifacts)
    yield tour
    page.close()


# ------------------------------------------------------------------------------------ templates
def open_pack_templates(tour: Tour) -> None:
    tour.close_panels()
    tour.command("Comfy.BrowseTemplates")
    tour.page.get_by_text(PACK_DIR, exact=True).first.click(timeout=30_000)
    for path in TEMPLATES:
        tour.page.get_by_text(path.stem, exact=True).first.wait_for(timeout=30_000)
    tour.page.wait_for_function(
        "() => [...document.querySelectorAll('[role=dialog] img')].every(i => i.complete)", timeout=30_000
    )
    tour.page.wait_for_timeout(500)


def test_templates_are_listed_with_thumbnails(tour):
    open_pack_templates(tour)
    thumbs = {p.stem: f"/api/workflow_templates/{PACK_DIR}/{p.stem}.jpg" for p in TEMPLATES}
    dialog = tour.page.locator("[role=dialog]").filter(has_text=PACK_DIR).last
    shown = dialog.inner_text()
    assert re.search(rf"Showing {len(TEMPLATES)} of {len(TEMPLATES)} templates?", shown), shown
    assert "bcg_api_example" not in shown
    for url in thumbs.values():
        status = [s for u, s in tour.responses.items() if u.split("?")[0].endswith(url.replace(" ", "%20"))]
        assert status == [200], f"thumbnail {url}: {status or 'not requested'}"
    loaded = tour.page.evaluate(
        "() => [...document.querySelectorAll('[role=dialog] img')].filter(i => i.naturalWidth > 0).length"
    )
    assert loaded >= len(TEMPLATES)
    tour.shot(
        "templates", f"the template browser's {PACK_DIR} category: {len(TEMPLATES)} template(s), titles and thumbnails"
    )


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.stem)
def test_a_template_opens_with_its_model_downloads(tour, path):
    graph = json.loads(path.read_text())
    open_pack_templates(tour)
    tour.page.get_by_text(path.stem, exact=True).first.click()
    tour.page.wait_for_function("n => app.graph._nodes.length === n", arg=len(graph["nodes"]), timeout=30_000)
    tour.page.wait_for_timeout(1500)
    nodes = tour.page.evaluate("() => app.graph._nodes.map(n => [n.type, !!LiteGraph.registered_node_types[n.type]])")
    assert sorted(t for t, _ in nodes) == sorted(n["type"] for n in graph["nodes"])
    assert all(known for _, known in nodes), nodes
    assert {"BCGApply", "BCGWarmupCapture"} <= {t for t, _ in nodes}
    slug = re.sub(r"[^A-Za-z0-9]+", "_", path.stem).strip("_")
    tour.shot(
        f"template_{slug}",
        f"template {path.stem!r} opened: its {len(graph['nodes'])} nodes (loaders red: models not installed)",
    )

    # The models it needs are not on the test server: the frontend offers their downloads.
    models = [m for n in graph["nodes"] for m in n.get("properties", {}).get("models", [])]
    tour.page.get_by_role("button", name="View details").first.click()
    panel = tour.page.get_by_text("Missing Models").first
    panel.wait_for(timeout=15_000)
    tour.page.wait_for_timeout(500)
    text = tour.page.locator("body").inner_text()
    for model in models:
        assert model["name"] in text.replace("\n", ""), f"{model['name']} not in the missing models panel"
    downloads = [b for b in tour.page.get_by_text("Download", exact=True).all() if b.is_visible()]
    assert len(downloads) == len(models), f"{len(downloads)} Download buttons for {len(models)} models"
    tour.shot(
        f"template_{slug}_models", f"template {path.stem!r}: the Missing Models panel offers each model's download"
    )


# ------------------------------------------------------------------------------------ node docs
@pytest.mark.parametrize("node_type", ["BCGApply", "BCGWarmupCapture"])
def test_node_docs_panel_shows_the_pack_page(tour, node_type):
    (template,) = [p for p in TEMPLATES if "Z-Image-Turbo" in p.name]
    graph = json.loads(template.read_text())
    tour.close_panels()
    tour.load("ui", graph)
    node_id = next(str(n["id"]) for n in graph["nodes"] if n["type"] == node_type)
    tour.frame([node_id], scale=1.0)
    tour.page.evaluate(
        "id => { app.canvas.deselectAll?.(); app.canvas.selectNode(app.graph.getNodeById(Number(id))) }", node_id
    )
    tour.page.wait_for_timeout(500)
    tour.page.get_by_role("button", name="Node Info").first.click()
    page_md = (DOCS / f"{node_type}.md").read_text()
    title = page_md.splitlines()[0].lstrip("# ").strip()
    heading = tour.page.get_by_role("heading", name=title, exact=True).last
    heading.wait_for(timeout=15_000)
    tour.page.wait_for_timeout(800)
    docs_url = f"/extensions/{PACK_DIR}/docs/{node_type}.md"
    assert any(u.endswith(docs_url) and s == 200 for u, s in tour.responses.items()), f"{docs_url} was not served"
    panel_text = heading.locator("xpath=ancestor::*[.//h2][1]").inner_text()
    for name in re.findall(r"^- \*\*`([a-z_]+)`\*\*", page_md, re.M):
        assert name in panel_text, f"input {name} not in the docs panel"
    tour.shot(f"docs_{node_type}", f"the node-docs panel (Node Info) showing web/docs/{node_type}.md")
    tour.close_panels()


def test_node_search_finds_both_nodes_by_speed(tour):
    """A user looking for a speed-up types "speed" in the node search (the search box a double
    click on the empty canvas opens): both BCG nodes are offered, from ``nodes/schema.py``'s
    ``SEARCH_ALIASES``."""
    tour.close_panels()
    tour.load("ui", json.loads(TEMPLATES[0].read_text()))
    tour.command("Workspace.SearchBox.Toggle")
    tour.page.wait_for_timeout(800)
    tour.page.keyboard.type("speed", delay=50)
    dialog = tour.page.locator("[role=dialog]").filter(has=tour.page.locator("input")).last
    for title in ("BCG Apply", "BCG Warmup Capture"):
        dialog.get_by_text(title, exact=True).first.wait_for(timeout=15_000)
    results = [t.split("\n", 1)[0] for t in dialog.get_by_role("option").all_inner_texts()]
    assert {"BCG Apply", "BCG Warmup Capture"} <= set(results[:5]), results[:10]  # among the first five
    tour.shot("search_speed", "the node search for 'speed' offers BCG Apply and BCG Warmup Capture")
    tour.command("Workspace.SearchBox.Toggle")  # closed as opened (Escape only clears its text)
    dialog.wait_for(state="hidden", timeout=10_000)
    tour.close_panels()


def test_the_badge_says_off_before_any_run(tour):
    """Where no model can get graphs (here a server without CUDA), a BCG node shows "BCG off" from
    the moment its workflow is loaded, before any run (the status the server publishes at start-up)."""
    if tour.server.cuda:
        pytest.skip("this server has CUDA, so BCG is on: the off badge is what a server without CUDA shows")
    (template,) = [p for p in TEMPLATES if "Z-Image-Turbo" in p.name]
    graph = json.loads(template.read_text())
    tour.close_panels()
    tour.set("Comfy.VueNodes.Enabled", False)
    tour.load("ui", graph)
    ids = [str(n["id"]) for n in graph["nodes"] if n["type"] in ("BCGApply", "BCGWarmupCapture")]
    tour.frame(ids, scale=1.0, dy=60)
    tour.page.evaluate("() => app.canvas.setDirty(true, true)")
    tour.page.wait_for_timeout(800)
    nodes = tour.page.evaluate(
        "ids => ids.map(id => { const n = app.graph.getNodeById(Number(id)); return [n.bcgBadge, !!n.bcgStatus]; })",
        ids,
    )
    for node_id, (badge, has_run_status) in zip(ids, nodes):
        assert not has_run_status, f"node {node_id} already has a run's status"  # the badge is the process's
        assert badge and badge["text"] == "BCG off: no CUDA", (node_id, badge)
        assert tour.badge_pixels(node_id, COLOURS["off"]) > 200, f"no off badge drawn above node {node_id}"
    tour.shot(
        "badge_off_before_run", "a template just opened on a server without CUDA: 'BCG off: no CUDA' before any run"
    )
    tour.close_panels()


# ------------------------------------------------------------------------------------ a run
def _run_the_workflow(tour: Tour, vue_nodes: bool, seed: int) -> None:
    """Open the e2e workflow in one node renderer, frame the BCG nodes and the sampler, run it
    and wait until the BCG nodes have their run's status and the queue is empty."""
    tour.close_panels()
    tour.set("Comfy.VueNodes.Enabled", vue_nodes)
    tour.load("api", e2e_workflow(seed=seed))
    if vue_nodes:
        tour.page.wait_for_selector(f'[data-node-id="{APPLY_ID}"]', timeout=30_000)
    tour.close_panels()
    tour.frame([*BCG_IDS, SAMPLER_ID], scale=1.0, dy=60)
    answer = tour.queue()
    assert answer.get("node_errors") in (None, {}), answer
    tour.wait_status()
    tour.wait_idle()


def test_badge_after_a_run_classic_canvas(tour):
    _run_the_workflow(tour, vue_nodes=False, seed=int(time.time()))
    tour.page.evaluate("() => app.canvas.setDirty(true, true)")
    tour.page.wait_for_timeout(800)
    want = f"BCG replayed {STEPS}/{STEPS}" if tour.server.cuda else "BCG off: no CUDA"
    for node_id, badge in tour.badges().items():
        assert badge["text"] == want, badge
        assert tour.badge_pixels(node_id, badge["bg"]) > 200, f"no {badge['bg']} badge drawn above node {node_id}"
    tour.shot("badge_classic", f"the classic canvas after a run: '{want}' above BCG Apply and BCG Warmup Capture")


def test_details_dialog(tour):
    tour.close_panels()
    xy = tour.page.evaluate(
        """id => { const n = app.graph.getNodeById(Number(id)), ds = app.canvas.ds, r = app.canvas.canvas.getBoundingClientRect();
            return [(n.pos[0] + 60 + ds.offset[0]) * ds.scale + r.left, (n.pos[1] - LiteGraph.NODE_TITLE_HEIGHT / 2 + ds.offset[1]) * ds.scale + r.top]; }""",
        APPLY_ID,
    )  # fmt: skip
    tour.page.mouse.click(*xy, button="right")
    tour.page.get_by_text("BCG details", exact=True).first.click()
    dialog = tour.page.locator("#bcg-details")
    dialog.wait_for(state="visible")
    tour.page.wait_for_timeout(300)
    headings = [h.upper() for h in dialog.locator("h3").all_inner_texts()]
    assert headings[:3] == ["STATUS", "LAST RUN", "CAPTURED GRAPHS (0)" if not tour.server.cuda else headings[2]], (
        headings
    )
    text = dialog.inner_text()
    if not tour.server.cuda:
        assert text.count("no CUDA") == 1, text  # the reason once, at the top; the rows point there
    tour.shot("details", "BCG details (right-click BCG Apply): status, last run, captured graphs, warm-up, in sections")
    dialog.get_by_text("Close", exact=True).click()


def vue_badge(tour: Tour, node_id: str, text: str):
    return tour.page.locator(f'[data-node-id="{node_id}"]').get_by_text(text, exact=True)


def test_badge_after_a_run_nodes_2(tour):
    _run_the_workflow(tour, vue_nodes=True, seed=int(time.time()) + 1)
    for node_id, badge in tour.badges().items():
        element = vue_badge(tour, node_id, badge["text"])
        assert element.count() == 1 and element.is_visible(), (
            f"Nodes 2.0: no '{badge['text']}' badge on node {node_id}: "
            + tour.page.locator(f'[data-node-id="{node_id}"]').inner_text()
        )
    tour.shot("badge_nodes2", "Nodes 2.0 (Vue nodes) after a run: the badge in each BCG node's badge row")

    # The states a GPU run gives, sent as the server sends them (bcg.status events).
    for node_id, run, text in (
        (APPLY_ID, {"replayed": 8, "calls": 8, "eager": {}, "state": "replayed"}, "BCG replayed 8/8"),
        (WARMUP_ID, {"replayed": 7, "calls": 8, "eager": {"not captured: 640x512 txt40 b1": 1},
                     "eager_kinds": {"not captured: 640x512 txt40 b1": "not_captured"}, "state": "partial"}, "BCG 7/8 · 1 not captured"),
    ):  # fmt: skip
        status = {
            "id": "gpu-like",
            "node_ids": [node_id],
            "disabled": None,
            "mode": "full",
            "last_run": {**run, "summary": ""},
            "captured": [],
        }
        tour.page.evaluate("s => comfyAPI.api.api.dispatchCustomEvent('bcg.status', s)", status)
        tour.page.wait_for_timeout(300)
        element = vue_badge(tour, node_id, text)
        assert element.count() == 1 and element.is_visible(), f"Nodes 2.0: no '{text}' badge on node {node_id}"
    tour.shot(
        "badge_nodes2_gpu_states",
        "Nodes 2.0: the replayed (green) and partial (amber) badges, from bcg.status events as a GPU run sends them",
    )
    tour.set("Comfy.VueNodes.Enabled", False)
    tour.page.wait_for_timeout(800)


# ------------------------------------------------------------------------------------ bad input
def test_a_bad_input_is_one_error_on_that_input(tour):
    tour.close_panels()
    tour.set("Comfy.VueNodes.Enabled", False)
    tour.load("api", e2e_workflow(seed=3))
    tour.close_panels()
    tour.set_widget(WARMUP_ID, "resolutions", BAD_RESOLUTIONS)
    answer = tour.queue()
    errors = answer["node_errors"]
    assert list(errors) == [WARMUP_ID], errors
    (error,) = errors[WARMUP_ID]["errors"]
    assert error["extra_info"]["input_name"] == "resolutions" and BAD_MESSAGE in error["details"], error
    tour.page.wait_for_timeout(800)
    marked = tour.page.evaluate("() => app.graph._nodes.filter(n => n.has_errors).map(n => String(n.id))")
    assert marked == [WARMUP_ID], marked
    tour.frame([APPLY_ID, WARMUP_ID], scale=1.0, dy=60)
    tour.page.get_by_role("button", name="View details").first.click()
    item = tour.page.get_by_role("button", name=re.compile(r"Info for BCG Warmup Capture - resolutions"))
    item.first.click(timeout=15_000)
    tour.page.get_by_text(BAD_MESSAGE).first.wait_for(timeout=10_000)
    panel = tour.page.locator("body").inner_text()
    assert "1 error" in panel and panel.count("BCG Warmup Capture - ") == 1, panel
    tour.page.wait_for_timeout(500)
    tour.shot(
        "bad_input",
        f"resolutions = {BAD_RESOLUTIONS!r}: one error, on BCG Warmup Capture's resolutions, with the message",
    )


def test_a_value_only_the_model_judges_stops_with_one_line(tour):
    tour.close_panels()
    tour.load("api", e2e_workflow(seed=4))
    tour.close_panels()
    tour.frame([APPLY_ID, WARMUP_ID], scale=1.0, dy=60)
    tour.page.evaluate(
        "() => { window.__bcgError = new Promise(r => comfyAPI.api.api.addEventListener('execution_error', e => r(e.detail), {once: true})) }"
    )
    tour.set_widget(WARMUP_ID, "resolutions", RUN_TIME_RESOLUTIONS)
    answer = tour.queue()
    assert answer.get("node_errors") in (None, {}), answer
    detail = tour.page.evaluate("() => window.__bcgError")
    assert detail["exception_type"] == "ExecutionBlocked" and detail["traceback"] == [], detail
    message = detail["exception_message"]
    assert message.startswith(
        f"Execution Blocked: BCG Warmup Capture #{WARMUP_ID}: resolutions: '{RUN_TIME_RESOLUTIONS}'"
    ), message
    assert "\n" not in message
    tour.page.wait_for_function(
        "id => app.graph.getNodeById(Number(id))?.bcgBadge?.state === 'error'", arg=WARMUP_ID, timeout=60_000
    )
    tour.page.evaluate("() => app.canvas.setDirty(true, true)")
    tour.page.wait_for_timeout(1500)
    badge = tour.badges()[WARMUP_ID]
    assert badge["text"] == "BCG: fix resolutions", badge
    assert tour.badge_pixels(WARMUP_ID, COLOURS["error"]) > 100
    # ComfyUI reports a blocked output at the node it reaches (the KSampler); the errors panel has the line.
    tour.page.get_by_role("button", name="View details").first.click()
    info = tour.page.get_by_role("button", name=re.compile(r"^Info for "))
    if info.count():
        info.first.click()
    line = message.removeprefix("Execution Blocked: ")
    tour.page.get_by_text(re.compile(re.escape(line[:60]))).first.wait_for(timeout=10_000)
    tour.page.wait_for_timeout(500)
    tour.shot(
        "run_time_error",
        f"resolutions = {RUN_TIME_RESOLUTIONS!r} on an image model: Execution Blocked with one line (errors panel), the badge names the input",
    )


def test_no_page_errors(tour):
    assert tour.errors == [], tour.errors
