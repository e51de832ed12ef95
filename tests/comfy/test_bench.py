"""The benchmark's default run on a machine without CUDA: eager on a reduced model, the reason
printed, and a report with every field filled that can be measured there."""

import json
import os
import subprocess
import sys

import pytest
import torch

from bcg_testing import ROOT

pytestmark = pytest.mark.comfy


@pytest.mark.skipif(
    torch.cuda.is_available(), reason="checks the CPU default; on CUDA the gpu suite runs the benchmark"
)
def test_default_benchmark_on_cpu_reports_eager_and_says_why(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--comfyui", os.environ["COMFYUI_PATH"], "--repeats", "2", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("smoke test, not a benchmark: no CUDA: eager only, on a reduced model")
    assert "denoise s" in proc.stdout.splitlines()[-2]  # the table is printed last
    cells = [cell.strip() for cell in proc.stdout.splitlines()[-1].split("|")]
    assert cells[2] == "eager" and cells[4] == "-" and cells[9] == "-", cells  # no speed-up, no "exact: yes"
    assert "[BCG] row: zimage | 128x128 | eager |" in proc.stderr  # logged as measured: a timeout keeps it

    report = json.loads(out.read_text())
    env = report["env"]
    import comfyui_version  # the host under test, from COMFYUI_PATH

    assert env["family"] == "zimage" and env["depth"] == 1 and env["comfyui"] == comfyui_version.__version__
    assert env["gpu"] == "none (CPU)" and "graph replay needs an NVIDIA GPU" in env["note"]
    [row] = report["rows"]
    assert row["mode"] == "eager" and row["resolution"] == "128x128" and row["error"] is None
    assert row["denoise_s"] > 0 and len(row["runs_s"]) == 2 and row["exact"] is True and row["speedup"] == 1.0
    assert row["repeatable"] is True  # eager's second run gave the first's latent
