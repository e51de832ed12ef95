"""A real ComfyUI server runs the example workflow with BCG: the prompt completes, the image is
saved, and ``GET /bcg/status`` and the ``bcg.status`` websocket event report the run.

On a machine without CUDA (the usual e2e host) BCG Apply installs its hooks switched off with
"no CUDA": every DiT call runs eager and is counted under that reason. On CUDA the warm-up
captures the workflow's one shape and every sampling call replays; a second prompt (new seed,
same plan) replays again without a new capture.
"""

import json
import subprocess
import sys

import pytest

from bcg_client.status import run_totals
from e2e_setup import (
    APPLY_ID, COND_LENGTH, ROOT, SAVE_ID, SIZE, STEPS, WARMUP_ID, cached_nodes, call_label, e2e_workflow,
    load_client, png_size, run_prompt, session_by_id,
)  # fmt: skip

pytestmark = pytest.mark.e2e
client = load_client()
LABEL = call_label(SIZE, COND_LENGTH)


def _check_run(server, event: dict, run: dict) -> None:
    """The sampling run's report: cfg 1 makes one DiT call per step; all replayed on CUDA, all
    eager with "no CUDA" otherwise."""
    assert run["calls"] == STEPS, run
    if server.cuda:
        assert event["disabled"] is None, event["disabled"]
        assert run["state"] == "replayed" and run["replayed"] == STEPS and run["eager"] == {}, run
    else:
        assert run["state"] == "off" and run["replayed"] == 0
        assert "no CUDA" in event["disabled"]
        assert run["eager"] == {f"disabled: {event['disabled']}": STEPS}


def test_prompt_runs_and_reports(comfy_server, artifacts):
    before = client.bcg_status(comfy_server.url)
    run = run_prompt(comfy_server, e2e_workflow(seed=1))

    # the prompt completed and its image exists
    entry = client.wait(comfy_server.url, run.prompt_id, timeout=30)
    images = entry["outputs"][SAVE_ID]["images"]
    assert len(images) == 1
    saved = client.download_images(comfy_server.url, entry, artifacts, "test_server")
    assert png_size(saved[0].read_bytes()) == SIZE
    assert (comfy_server.base / "output" / images[0]["subfolder"] / images[0]["filename"]).is_file()

    # the websocket event of the sampling run, sent to the BCG nodes of the workflow
    assert run.events, "no bcg.status websocket message arrived"
    event = run.events[-1]
    assert {APPLY_ID, WARMUP_ID} <= set(event["node_ids"])
    _check_run(comfy_server, event, event["last_run"])

    # GET /bcg/status (and its /api twin) says the same
    after = client.bcg_status(comfy_server.url)
    assert client.http_json(comfy_server.url, "/api/bcg/status")["sessions"] == after
    session = session_by_id(after, event["id"])
    assert session["last_run"] == event["last_run"]
    replayed, eager = run_totals(before, after)
    if comfy_server.cuda:
        device = client.http_json(comfy_server.url, "/system_stats")["devices"][0]["name"]
        assert device.endswith("native"), (
            f"expected PyTorch's native allocator (the pack's prestartup script switches to it): {device}"
        )
        assert session["last_warmup"]["refusal"] is None, session["last_warmup"]
        assert LABEL in [c["label"] for c in session["captured"]], session["captured"]
        assert session["captures"] >= 1 and session["hits"] >= STEPS
        assert replayed == STEPS and not eager, (replayed, eager)
    else:
        assert session["captured"] == [] and session["hits"] == 0
        assert "no CUDA" in session["last_warmup"]["refusal"]
        assert replayed == 0 and sum(eager.values()) == STEPS and all("no CUDA" in reason for reason in eager)
    (artifacts / "bcg_status.json").write_text(json.dumps({"sessions": after}, indent=2))

    # A second prompt with the same plan (new seed, so the sampler runs again): the warm-up comes
    # from ComfyUI's cache, nothing new is captured, and the run reports the same way.
    second = run_prompt(comfy_server, e2e_workflow(seed=2))
    entry = client.wait(comfy_server.url, second.prompt_id, timeout=30)
    assert WARMUP_ID in cached_nodes(entry)
    assert second.events and second.events[-1]["id"] == event["id"]
    _check_run(comfy_server, second.events[-1], second.last_run)
    again = session_by_id(client.bcg_status(comfy_server.url), event["id"])
    assert again["captures"] == session["captures"], "the second prompt captured again"
    assert [c["label"] for c in again["captured"]] == [c["label"] for c in session["captured"]]
    assert again["hits"] - session["hits"] == (STEPS if comfy_server.cuda else 0)


def test_client_script(comfy_server, artifacts, tmp_path):
    workflow = tmp_path / "workflow.json"
    workflow.write_text(json.dumps(e2e_workflow()))
    summary = tmp_path / "summary.json"
    out = artifacts / "client_out"
    cmd = [
        sys.executable, str(ROOT / "scripts" / "bcg_client.py"), "--server", comfy_server.url, "--workflow", str(workflow),
        "-n", "2", "--seed", "100", "--resolutions", "64x64,96x64", "--out", str(out), "--json", str(summary),
    ]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    print(result.stdout)

    totals = json.loads(summary.read_text())
    assert totals["calls"] == 2 * STEPS
    if comfy_server.cuda:  # 64x64 is the warmed resolution; 96x64 was never captured
        assert totals["replayed"] == STEPS
        assert totals["eager"] == {f"not captured: {call_label((96, 64), COND_LENGTH)}": STEPS}, totals["eager"]
    else:
        assert totals["replayed"] == 0
        assert all("no CUDA" in reason for reason in totals["eager"])
    sizes = sorted(png_size(open(p, "rb").read()) for p in totals["images"])
    assert sizes == [(64, 64), (96, 64)]
    assert f"replayed {totals['replayed']}/{2 * STEPS} DiT calls" in result.stdout


def test_client_help():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bcg_client.py"), "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0 and "/bcg/status" in result.stdout and "--resolutions" in result.stdout
