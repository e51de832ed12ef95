"""E2E layer: a real ComfyUI server (``python main.py --cpu``) with this pack in its custom_nodes.

Skipped with the reason when ``$COMFYUI_PATH`` is unset or ComfyUI's server dependencies are
missing. One server and one base directory (see ``e2e_setup.py``) serve every test of a session.
Artifacts (images, screenshots, the server log) go to ``$BCG_ARTIFACTS`` when set.
"""

import os
import shutil
from pathlib import Path

import pytest

from e2e_setup import ComfyServer, make_base, skip_reason

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP_REASON = skip_reason()


def pytest_report_header(config):
    if SKIP_REASON:
        return f"e2e layer: skipped ({SKIP_REASON})"
    return f"e2e layer: ComfyUI server from {os.environ['COMFYUI_PATH']}"


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
def comfy_server(tmp_path_factory, artifacts):
    """A started ComfyUI server; stopped (its log kept in the artifacts) at the end of the session."""
    base = make_base(tmp_path_factory.mktemp("comfy_base"))
    server = ComfyServer(base).start()
    try:
        yield server
    finally:
        server.stop()
        shutil.copy(server.log_path, artifacts / "comfyui_server.log")
