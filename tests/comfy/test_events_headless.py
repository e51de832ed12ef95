"""A run's report in a process that serves nothing (a script, ``bench.batch``, a test) sends
nothing and imports nothing to find that out: ComfyUI's ``server`` module costs seconds to import
(its database and frontend modules), which a headless batch's first run paid once."""

import subprocess
import sys
import textwrap

import pytest
from bcg_testing import ROOT, comfyui_root

pytestmark = pytest.mark.comfy

SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[2])
    from bench.setup import setup_comfyui
    setup_comfyui(sys.argv[1])  # as bench.batch starts: ComfyUI importable, its server module too
    from bcg_runtime.comfy import events
    events.send(events.EVENT, lambda: {"status": "on"})
    events.publish_input_error("7", "bad value", "capture")
    print("server" in sys.modules)
    """
)


def test_a_report_without_a_server_imports_no_server_module():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(comfyui_root()), str(ROOT)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
