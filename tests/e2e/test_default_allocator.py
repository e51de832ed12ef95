"""BCG under ComfyUI's default CUDA allocator: a second server started exactly as ``python main.py``.

On NVIDIA GPUs ComfyUI 0.8 switches PyTorch to the cudaMallocAsync backend unless started with
``--disable-cuda-malloc`` (the other e2e tests' server uses that flag). That backend has no private
memory pools (``torch.cuda.MemPool``) and no memory snapshots. Whatever BCG can do there, it must
not break the user's prompt: the prompt completes, its result equals the eager twin bit for bit,
and every DiT call is either replayed or counted eager with a reason. What happened (replayed, or
the reasons) is recorded in ``e2e_summary.json`` under ``default_allocator``.
"""

import shutil

import pytest
import torch

from e2e_setup import STEPS, ComfyServer, eager_twin, latent_workflow, load_client, run_prompt, saved_latent, session_by_id

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="the CUDA allocator backend exists only with CUDA: needs a CUDA GPU"),
]
client = load_client()


@pytest.fixture(scope="module")
def default_server(comfy_base, artifacts):
    server = ComfyServer(comfy_base, default_allocator=True, name="server_default_allocator").start()
    try:
        yield server
    finally:
        server.stop()
        shutil.copy(server.log_path, artifacts / "comfyui_server_default_allocator.log")


def test_prompt_under_default_allocator_completes_and_equals_eager(default_server, summary):
    device = client.http_json(default_server.url, "/system_stats")["devices"][0]["name"]
    record = summary["default_allocator"] = {"device": device}
    if "cudaMallocAsync" not in device:
        pytest.skip(f"ComfyUI kept PyTorch's native allocator on this machine ({device}); nothing different to test")

    prompt = latent_workflow(31, prefix="bcg_default_allocator/bcg")
    run = run_prompt(default_server, prompt)  # an execution error (e.g. in the warm-up) fails here
    entry = client.wait(default_server.url, run.prompt_id, timeout=60)
    last = run.last_run
    session = session_by_id(client.bcg_status(default_server.url), run.events[-1]["id"])
    record.update(run=last, warmup=session["last_warmup"], disabled=session["disabled"])
    assert last["calls"] == STEPS and last["replayed"] + sum(last["eager"].values()) == STEPS, last
    assert all(reason.strip() for reason in last["eager"]), last

    twin = run_prompt(default_server, eager_twin(prompt, "bcg_default_allocator/eager"))
    reference = saved_latent(default_server.base, client.wait(default_server.url, twin.prompt_id, timeout=60))
    out = saved_latent(default_server.base, entry)
    record["equal"] = bool(out.shape == reference.shape and torch.equal(out, reference))
    assert record["equal"], "the result under cudaMallocAsync differs from eager"
