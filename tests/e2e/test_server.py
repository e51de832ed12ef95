"""A real ComfyUI server runs the example workflow with BCG: the prompt completes, the image is
saved, and ``GET /bcg/status`` and the ``bcg.status`` websocket event report the run.

On a machine without CUDA (the usual e2e host) BCG Apply installs its hooks switched off with
"no CUDA": every DiT call runs eager and is counted under that reason.
"""

import asyncio
import json
import subprocess
import sys
import uuid

import pytest

from e2e_setup import APPLY_ID, ROOT, SAVE_ID, SIZE, STEPS, WARMUP_ID, e2e_workflow, load_client, png_size

pytestmark = pytest.mark.e2e
client = load_client()


async def _run_and_listen(server, prompt: dict, timeout: float = 600) -> tuple[str, list[dict]]:
    """Queue ``prompt`` with a websocket open; (prompt id, every bcg.status event until it finished)."""
    import aiohttp

    client_id = uuid.uuid4().hex
    events: list[dict] = []
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(f"{server.url.replace('http', 'ws', 1)}/ws?clientId={client_id}") as ws:
            prompt_id = await asyncio.to_thread(client.queue, server.url, prompt, client_id)

            async def listen():
                async for msg in ws:
                    if msg.type != aiohttp.WSMsgType.TEXT:
                        continue  # binary previews
                    message = json.loads(msg.data)
                    kind, data = message["type"], message.get("data") or {}
                    if kind == "bcg.status":
                        events.append(data)
                    elif kind == "execution_error" and data.get("prompt_id") == prompt_id:
                        raise AssertionError(f"prompt failed: {data.get('exception_message')}")
                    elif kind == "executing" and data.get("node") is None and data.get("prompt_id") == prompt_id:
                        return

            await asyncio.wait_for(listen(), timeout)
    return prompt_id, events


def test_prompt_runs_and_reports(comfy_server, artifacts):
    before = client.bcg_status(comfy_server.url)
    prompt_id, events = asyncio.run(_run_and_listen(comfy_server, e2e_workflow(seed=1)))

    # the prompt completed and its image exists
    entry = client.wait(comfy_server.url, prompt_id, timeout=30)
    images = entry["outputs"][SAVE_ID]["images"]
    assert len(images) == 1
    saved = client.download_images(comfy_server.url, entry, artifacts, "test_server")
    assert png_size(saved[0].read_bytes()) == SIZE
    assert (comfy_server.base / "output" / images[0]["subfolder"] / images[0]["filename"]).is_file()

    # the websocket event of the sampling run, sent to the BCG nodes of the workflow
    assert events, "no bcg.status websocket message arrived"
    event = events[-1]
    assert {APPLY_ID, WARMUP_ID} <= set(event["node_ids"])
    run = event["last_run"]
    assert run["state"] == "off" and run["replayed"] == 0 and run["calls"] == STEPS  # cfg 1: one call per step
    assert "no CUDA" in event["disabled"]
    assert list(run["eager"]) == [f"disabled: {event['disabled']}"] and run["eager"][f"disabled: {event['disabled']}"] == STEPS

    # GET /bcg/status (and its /api twin) says the same
    after = client.bcg_status(comfy_server.url)
    assert client.http_json(comfy_server.url, "/api/bcg/status")["sessions"] == after
    session = next(s for s in after if s["id"] == event["id"])
    assert session["last_run"] == run and session["captured"] == [] and session["hits"] == 0
    assert "no CUDA" in session["last_warmup"]["refusal"]
    replayed, eager = client.run_totals(before, after)
    assert replayed == 0 and sum(eager.values()) == STEPS and all("no CUDA" in reason for reason in eager)
    (artifacts / "bcg_status.json").write_text(json.dumps({"sessions": after}, indent=2))


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
    assert totals["calls"] == 2 * STEPS and totals["replayed"] == 0
    assert all("no CUDA" in reason for reason in totals["eager"])
    sizes = sorted(png_size(open(p, "rb").read()) for p in totals["images"])
    assert sizes == [(64, 64), (96, 64)]
    assert f"replayed 0/{2 * STEPS} DiT calls" in result.stdout


def test_client_help():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "bcg_client.py"), "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and "/bcg/status" in result.stdout and "--resolutions" in result.stdout
