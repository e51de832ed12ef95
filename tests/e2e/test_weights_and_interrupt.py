"""Weights that move and runs that are cancelled, through ComfyUI's own HTTP routes.

``POST /free`` after a warmed run unloads the model (its weights go to the offload device and come
back at new addresses when the next prompt loads it); with ``free_memory`` ComfyUI also drops its
node cache, so the next prompt loads the checkpoint again and BCG Apply and the warm-up run anew.
``POST /interrupt`` during a replayed run stops it at a DiT-call boundary (BCG checks once per
call; a replay runs no per-op checks). After either, results must equal the eager twin (the same
prompt with the BCG nodes bypassed), compared bit for bit on SaveLatent files.

On a CPU server BCG is off ("no CUDA"): these tests then check the server path (the unload and
reload happen, the interrupt stops the run at a step, the next prompt is right); on CUDA they also
check what BCG guarantees about replay.
"""

from __future__ import annotations

import time

import pytest
import torch

from e2e_setup import (
    APPLY_ID, SAMPLER_ID, STEPS, WARMUP_ID, cached_nodes, eager_twin, latent_workflow, load_client, post,
    run_prompt, saved_latent,
)  # fmt: skip

pytestmark = pytest.mark.e2e
client = load_client()
LOADER_ID = "1"
#: Steps of the run that gets interrupted: over a second of sampling even on an H200, far longer
#: than the interrupt takes to arrive (one scheduler sigma per step: "simple" spaces 1000 apart).
INTERRUPT_STEPS = 1000
#: Finished steps after which POST /interrupt is sent.
INTERRUPT_AT = 3
WEIGHTS_MOVED = "disabled: weights moved since warm-up"


def _loads(server) -> int:
    """How often ComfyUI loaded a model not already loaded ("Requested to load ..." in its log)."""
    return server.log_path.read_text(errors="replace").count("Requested to load")


def _history(server, prompt_id: str) -> dict:
    return client.http_json(server.url, f"/history/{prompt_id}")[prompt_id]


def _run(server, seed: int, prefix: str, steps: int = STEPS):
    """Run the latent workflow (warm-up plan of the example: its resolution and its prompt)."""
    prompt = latent_workflow(seed, steps=steps, prefix=prefix)
    run = run_prompt(server, prompt)
    return prompt, run, client.wait(server.url, run.prompt_id, timeout=60)


def _check_all_replayed_or_off(server, run, calls: int = STEPS) -> None:
    """All calls replayed on CUDA; on a CPU server all eager as "no CUDA"."""
    last = run.last_run
    assert last["calls"] == calls, last
    if server.cuda:
        assert last["state"] == "replayed" and last["replayed"] == calls and last["eager"] == {}, last
    else:
        assert last["state"] == "off" and list(last["eager"]) == [f"disabled: {run.events[-1]['disabled']}"], last
        assert "no CUDA" in run.events[-1]["disabled"]


def _check_equals_eager(server, prompt: dict, entry: dict, prefix: str) -> None:
    twin = run_prompt(server, eager_twin(prompt, prefix))
    assert not twin.events, "the eager twin ran through BCG"
    reference = saved_latent(server.base, client.wait(server.url, twin.prompt_id, timeout=60))
    out = saved_latent(server.base, entry)
    assert out.shape == reference.shape and torch.equal(out, reference), (
        f"{prefix}: result differs from eager (max abs diff {(out.float() - reference.float()).abs().max().item():g})"
    )


def _free(server, body: dict) -> None:
    """POST /free; the prompt worker applies it as soon as it wakes (immediately when idle)."""
    assert post(server.url, "/free", body) == 200
    time.sleep(2.0)


@pytest.mark.parametrize(
    "body",
    [{"unload_models": True, "free_memory": True}, {"unload_models": True}],
    ids=["free_memory", "unload_models"],
)
def test_free_then_next_prompt_never_replays_stale_weights(comfy_server, summary, body):
    """After POST /free the next run equals eager, and BCG either re-warmed (a new warm-up captured
    the shapes again on the reloaded weights) or ran eager saying the weights moved.

    ``free_memory`` resets ComfyUI's cache: the loader, BCG Apply (a new session) and the warm-up
    run again, so the run replays on fresh captures. ``unload_models`` alone keeps the cache: the
    same session meets its weights reloaded. Where any weight came back at another address the
    fingerprint differs, the run is eager with "weights moved", and the warm-up re-runs on the next
    prompt; where every weight came back at its old address the graphs read the same values there
    and replay is correct. Both outcomes are accepted and recorded; a replay that differs from
    eager is not.
    """
    name = "free_memory" if body.get("free_memory") else "unload_models"
    _, warm, _ = _run(comfy_server, 11, f"bcg_free/{name}_warm")
    _check_all_replayed_or_off(comfy_server, warm)
    warm_session = warm.events[-1]["id"]
    loads = _loads(comfy_server)

    _free(comfy_server, body)
    prompt, run, entry = _run(comfy_server, 12, f"bcg_free/{name}_after")
    assert _loads(comfy_server) > loads, "the model was not loaded again after POST /free"
    cached = cached_nodes(entry)
    record = summary.setdefault("weights_moved", {})[name] = {"cached": sorted(cached), "after": run.last_run}
    if body.get("free_memory"):
        assert not cached, f"ComfyUI kept cached outputs after free_memory: {sorted(cached)}"
    else:
        assert {LOADER_ID, APPLY_ID, WARMUP_ID} <= cached, (
            f"unload_models alone should keep the nodes cached: {sorted(cached)}"
        )

    follow = None
    if comfy_server.cuda:
        follow = _check_weights_moved_on_cuda(comfy_server, body, warm_session, run, name, record)
    else:
        _check_all_replayed_or_off(comfy_server, run)
    _check_equals_eager(comfy_server, prompt, entry, f"bcg_free/{name}_after_eager")
    if follow is not None:
        _check_equals_eager(comfy_server, follow[0], follow[1], f"bcg_free/{name}_next_eager")


def _check_weights_moved_on_cuda(server, body: dict, warm_session: str, run, name: str, record: dict):
    """The CUDA half of the /free test; returns the follow-up prompt and entry to compare, if any."""
    session_id = run.events[-1]["id"]
    status = {s["id"]: s for s in client.bcg_status(server.url)}
    if body.get("free_memory"):  # a new session, warmed in this prompt
        assert session_id != warm_session, "free_memory: the run used the old BCG session"
        assert status[session_id]["captures"] >= 1 and status[session_id]["last_warmup"]["refusal"] is None
        record["outcome"] = "re-warmed (new session)"
        _check_all_replayed_or_off(server, run)
        return None
    assert session_id == warm_session, "unload_models: the cached BCG Apply should keep its session"
    last = run.last_run
    if last["replayed"] == 0:
        [reason] = last["eager"]
        assert reason.startswith(WEIGHTS_MOVED) and last["eager"][reason] == STEPS, last
        record["outcome"] = "eager: weights moved; re-warmed on the next prompt"
    else:
        _check_all_replayed_or_off(server, run)
        record["outcome"] = "replayed: every weight came back at its old address (fingerprint unchanged)"
    prompt, follow, entry = _run(server, 13, f"bcg_free/{name}_next")
    rewarmed = WARMUP_ID not in cached_nodes(entry)
    assert rewarmed == (last["replayed"] == 0), f"warm-up re-ran: {rewarmed}, after a run with {last}"
    _check_all_replayed_or_off(server, follow)
    record["next"] = follow.last_run
    return prompt, entry


def test_interrupt_stops_a_replayed_run_and_the_next_prompt_is_right(comfy_server, summary):
    _, warm, _ = _run(comfy_server, 21, "bcg_interrupt/warm")
    _check_all_replayed_or_off(comfy_server, warm)

    long = run_prompt(
        comfy_server,
        latent_workflow(22, steps=INTERRUPT_STEPS, prefix="bcg_interrupt/long"),
        interrupt_after=INTERRUPT_AT,
    )
    assert long.interrupted is not None, "no execution_interrupted message: the run was not interrupted"
    assert long.interrupted["node_id"] == SAMPLER_ID, long.interrupted
    status = _history(comfy_server, long.prompt_id)["status"]
    assert not status["completed"] and "execution_interrupted" in [m[0] for m in status["messages"]], status
    done = max(long.progress)
    last = long.last_run
    summary["interrupt"] = {"steps": INTERRUPT_STEPS, "interrupt_after": INTERRUPT_AT, "progress": done, "run": last}
    # Stopped early, at a call boundary: every step the server reported was a counted DiT call. The
    # calls may run ahead of the last progress message: 0.33.0's ProgressBar sends a step's
    # progress (and checks for the interrupt) only every so often (comfy/utils.py, update_absolute
    # throttles), so at fast steps several calls finish between two messages.
    assert INTERRUPT_AT <= done <= last["calls"] < INTERRUPT_STEPS, (done, last)
    _check_all_replayed_or_off(comfy_server, long, calls=last["calls"])

    prompt, after, entry = _run(comfy_server, 23, "bcg_interrupt/after")
    assert WARMUP_ID in cached_nodes(entry), "the interrupt made the warm-up run again"
    assert after.events[-1]["id"] == warm.events[-1]["id"]
    _check_all_replayed_or_off(comfy_server, after)
    _check_equals_eager(comfy_server, prompt, entry, "bcg_interrupt/after_eager")
