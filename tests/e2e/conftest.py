"""E2E layer: a real ComfyUI server (``python main.py``, on the GPU when this process sees CUDA,
else with ``--cpu``) with this pack in its custom_nodes.

Skipped with the reason when there is no ComfyUI (``$COMFYUI_PATH``, or the ComfyUI this pack
sits in, set by the top-level conftest) or ComfyUI's server dependencies are
missing. One server and one base directory (see ``e2e_setup.py``) serve every test of a session.
Artifacts (images, screenshots, the server log, ``e2e_summary.json``) go to ``$BCG_ARTIFACTS``
when set.
"""

import json
import os
import shutil
from pathlib import Path

import pytest

from e2e_setup import ComfyServer, cuda_available, make_base, skip_reason

SUMMARY_FILE = "e2e_summary.json"
#: The browser of the browser tests: Debian's chromium (nothing is downloaded), or $BCG_CHROMIUM.
CHROMIUM = os.environ.get("BCG_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP_REASON = skip_reason()


def pytest_report_header(config):
    if SKIP_REASON:
        return f"e2e layer: skipped ({SKIP_REASON})"
    device = "CUDA" if cuda_available() else "--cpu"
    return f"e2e layer: ComfyUI server ({device}) from {os.environ['COMFYUI_PATH']}"


def pytest_collection_modifyitems(config, items):
    if SKIP_REASON is None:
        return
    skip = pytest.mark.skip(reason=f"e2e: {SKIP_REASON}")
    for item in items:
        if str(item.path).startswith(HERE + os.sep):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory) -> Path:
    path = os.environ.get("BCG_ARTIFACTS")
    if path:
        Path(path).mkdir(parents=True, exist_ok=True)
        return Path(path)
    return tmp_path_factory.mktemp("bcg_artifacts")


@pytest.fixture(scope="session")
def summary(artifacts):
    """One dict the tests fill with their results (soak counts and memory curve, ...), written to
    ``<artifacts>/e2e_summary.json`` at the end of the session, also after a failure."""
    results: dict = {}
    yield results
    if results:
        (artifacts / SUMMARY_FILE).write_text(json.dumps(results, indent=1, default=str))


@pytest.fixture(scope="session")
def comfy_base(tmp_path_factory) -> Path:
    """The ComfyUI base directory (models, conditioning, pack link) every server of the session uses."""
    return make_base(tmp_path_factory.mktemp("comfy_base"))


@pytest.fixture(scope="session")
def comfy_server(comfy_base, artifacts):
    """A started ComfyUI server; stopped (its log kept in the artifacts) at the end of the session."""
    server = ComfyServer(comfy_base).start()
    try:
        yield server
    finally:
        server.stop()
        shutil.copy(server.log_path, artifacts / "comfyui_server.log")


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium driven by playwright (test_browser.py, test_ui_tour.py); skipped with the
    reason when playwright or the browser is missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip(
            "playwright is not installed: pip install playwright (the system chromium is used, nothing is downloaded)"
        )
    if not os.path.exists(CHROMIUM):
        pytest.skip("chromium is not installed: apt-get install -y chromium (or set BCG_CHROMIUM to a Chromium binary)")
    args = [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-dev-shm-usage",
    ]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=args)
        yield browser
        browser.close()
