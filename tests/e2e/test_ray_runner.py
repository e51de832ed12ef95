"""The Ray runner (scripts/bcg_ray.py) for real: a local Ray on this machine, two real ComfyUI
servers with the pack and the e2e layer's synthetic Z-Image, one given by URL (started here) and
one started by the runner as a Ray actor; 24 jobs (12 seeds x 2 sizes); the given server is killed
(SIGKILL) while it runs a job. Every job's result is in the results JSON exactly once, the killed
server's unfinished jobs ran on the other one, the images are saved once each under the client's
names, and the BCG totals add up per server and overall.

Skipped without ray (optional: ``pip install ray``) and, like the whole e2e layer, without a
ComfyUI to start (CI has none). On a machine without CUDA both servers run ``--cpu`` and BCG counts
every DiT call eager as "no CUDA"; on CUDA the runner's server takes the GPU Ray gives it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from bcg_client.comfy_http import http_json
from bcg_client.errors import ClientError
from e2e_setup import COND_LENGTH, ROOT, STEPS, ComfyServer, call_label, e2e_workflow, png_size

pytestmark = pytest.mark.e2e
pytest.importorskip("ray", reason="ray is not installed (optional: pip install ray to run scripts/bcg_ray.py)")

SEEDS, SIZES = 12, ("64x64", "96x64")
JOBS = SEEDS * len(SIZES)
KILL_AFTER = 4  # jobs done before the given server is killed


def _running(url: str) -> bool:
    """Whether the server is executing a prompt now."""
    try:
        return bool(http_json(url, "/queue", timeout=5).get("queue_running"))
    except ClientError:
        return False


def _done(path) -> int:
    try:
        return json.loads(path.read_text())["done"]
    except (OSError, ValueError, KeyError):
        return 0


def test_a_server_killed_mid_job_loses_nothing_and_duplicates_nothing(comfy_base, artifacts, tmp_path):
    spec = tmp_path / "spec.json"
    (tmp_path / "workflow.json").write_text(json.dumps(e2e_workflow()))
    spec.write_text(json.dumps({"workflow": "workflow.json", "seeds": SEEDS, "sizes": list(SIZES)}))
    out, images = tmp_path / "results.json", tmp_path / "images"
    given = ComfyServer(comfy_base, name="ray_given").start()
    device = [] if given.cuda else ["--cpu"]
    comfy_args = f"--base-directory {comfy_base} --database-url sqlite:///:memory:"
    cmd = [sys.executable, str(ROOT / "scripts" / "bcg_ray.py"), "--job", str(spec), "--servers", given.url,
           "--comfyui", os.environ["COMFYUI_PATH"], "--gpus", "1", *device, "--comfy-args", comfy_args,
           "--out", str(out), "--images", str(images), "--in-flight", "2", "--lost-after", "5", "--timeout", "300"]  # fmt: skip
    # Ray's memory monitor would kill workers for memory the machine's other processes use (a shared CPU box)
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_memory_monitor_refresh_ms": "0", "PYTHONUNBUFFERED": "1"}
    log = artifacts / "ray_runner.log"
    killed_at = None
    try:
        with open(log, "w") as log_file:
            runner = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, env=env, text=True)
            deadline = time.monotonic() + 600
            while runner.poll() is None and time.monotonic() < deadline:
                if killed_at is None and _done(out) >= KILL_AFTER and _running(given.url):
                    killed_at = _done(out)
                    os.kill(given.proc.pid, signal.SIGKILL)  # mid-job: it is executing a prompt
                time.sleep(0.2)
            if runner.poll() is None:
                runner.kill()
                pytest.fail(f"the runner did not finish within 600s; its log ends:\n{log.read_text()[-3000:]}")
    finally:
        given.stop()
        shutil.copy(given.log_path, artifacts / "ray_given_server.log")
    text = log.read_text()
    print(text)
    assert runner.returncode == 0, text[-3000:]
    assert killed_at is not None, (
        "the given server was never seen running a job after the first ones: nothing was killed"
    )

    doc = json.loads(out.read_text())
    started = next(url for url in doc["servers"] if url != given.url)
    # every job exactly once, all done
    assert doc["prompts"] == JOBS and doc["done"] == JOBS and doc["failed"] == 0 and doc["pending"] == 0
    keys = [j["key"] for j in doc["jobs"]]
    assert len(keys) == len(set(keys)) == JOBS
    assert Counter((j["seed"], f"{j['width']}x{j['height']}") for j in doc["jobs"]) == Counter(
        (seed, size) for seed in range(SEEDS) for size in SIZES
    )
    # the killed server's unfinished jobs ran on the other one
    moved = [j for j in doc["jobs"] if len(j["attempts"]) > 1]
    assert moved, "the killed server had a job running: it must have been rerun elsewhere"
    for job in moved:
        assert job["attempts"][0]["server"] == given.url and "did not answer" in job["attempts"][0]["result"], job[
            "attempts"
        ]
        assert job["server"] == started and job["attempts"][-1]["result"] == "done"
    assert doc["per_server"][given.url]["lost"] == len(moved)
    assert doc["per_server"][given.url]["done"] + doc["per_server"][started]["done"] == JOBS
    assert "not answering" in text and f"[{JOBS}/{JOBS}] " in text
    # every job's own execution time, from ComfyUI's history
    assert all(isinstance(j["run_seconds"], float) and 0 < j["run_seconds"] <= j["seconds"] for j in doc["jobs"])
    # BCG totals: the started server ran exactly its jobs; the killed one at least its finished ones
    survivor, dead = doc["per_server"][started], doc["per_server"][given.url]
    assert survivor["calls"] == STEPS * survivor["done"]
    assert dead["calls"] >= STEPS * dead["done"]
    assert (
        doc["calls"] == survivor["calls"] + dead["calls"] and doc["replayed"] == survivor["replayed"] + dead["replayed"]
    )
    if given.cuda:
        assert survivor["replayed"] == STEPS * sum(j["width"] == 64 for j in doc["jobs"] if j["server"] == started)
        assert set(survivor["eager"]) <= {f"not captured: {call_label((96, 64), COND_LENGTH)}"}
    else:
        assert doc["replayed"] == 0 and all("no CUDA" in reason for reason in doc["eager"]), doc["eager"]
    assert f"BCG over {JOBS} prompt(s): replayed {doc['replayed']}/{doc['calls']} DiT calls" in text
    # the images: one per job, named by the client, each of its job's size
    files = sorted(images.iterdir())
    assert len(files) == JOBS and sorted(str(f) for f in files) == sorted(p for j in doc["jobs"] for p in j["images"])
    for job in doc["jobs"]:
        [path] = job["images"]
        assert png_size(open(path, "rb").read()) == (job["width"], job["height"])
    # the runner stopped the server it started
    with pytest.raises(ClientError):
        http_json(started, "/queue", timeout=5)
