"""BCG and ComfyUI's default CUDA allocator: two more servers, each started as ``python main.py``.

On NVIDIA GPUs ComfyUI sets ``backend:cudaMallocAsync`` for PyTorch before it imports torch;
that allocator has no private graph pools, and a failed capture aborts the process under it. The
pack's ``prestartup_script.py`` removes the setting before torch loads
(``bcg_runtime/allocator_env.py``), so:

- (a) a server started with no flags runs PyTorch's native allocator (``/system_stats`` names no
  cudaMallocAsync), its log has the pack's one ``[BCG]`` allocator line, and the prompt replays
  every DiT call and equals its eager twin bit for bit;
- (b) a server started with ``BCG_KEEP_CUDA_MALLOC_ASYNC=1`` keeps cudaMallocAsync (the opt-out
  is logged once), BCG refuses with the allocator reason (``guards.allocator_refusal``), every
  DiT call runs eager with that reason, and the output still equals the eager twin.

Both need a CUDA GPU. Where ComfyUI does not pick cudaMallocAsync at all (a GPU on its blacklist,
or ``PYTORCH_CUDA_ALLOC_CONF`` set otherwise by the tester), there is nothing to switch and the
test says so in its skip. Outcomes are recorded in ``e2e_summary.json`` under
``default_allocator`` (a) and ``keep_cuda_malloc_async`` (b); ``scripts/e2e_summary.py`` prints them.
"""

import shutil

import pytest
import torch

from e2e_setup import (
    OPT_OUT_VAR, STEPS, ComfyServer, eager_twin, latent_workflow, load_client, run_prompt, saved_latent, session_by_id,
)  # fmt: skip

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.gpu,
    pytest.mark.skipif(
        not torch.cuda.is_available(),
        reason="ComfyUI picks cudaMallocAsync only on an NVIDIA GPU, and the pack switches it only there: needs a CUDA GPU",
    ),
]
client = load_client()
#: The start of the prestartup script's line when it switches the allocator (allocator_env.prestartup).
SWITCH_LINE = "[BCG] This ComfyUI process now uses PyTorch's native CUDA allocator instead of cudaMallocAsync"
#: The start of its line when the opt-out keeps cudaMallocAsync.
KEEP_LINE = f"[BCG] {OPT_OUT_VAR}="
#: What guards.allocator_refusal's reason starts with.
REFUSAL = "PyTorch runs the cudaMallocAsync allocator, which has no private graph pools"


def _server(comfy_base, artifacts, name: str, env: dict | None = None):
    server = ComfyServer(comfy_base, env=env, name=name).start()
    try:
        yield server
    finally:
        server.stop()
        shutil.copy(server.log_path, artifacts / f"comfyui_{name}.log")


@pytest.fixture(scope="module")
def plain_server(comfy_base, artifacts):
    """``python main.py`` with no flags and no opt-out: the pack's prestartup script runs."""
    yield from _server(comfy_base, artifacts, "server_default_allocator")


@pytest.fixture(scope="module")
def keep_async_server(comfy_base, artifacts):
    """``BCG_KEEP_CUDA_MALLOC_ASYNC=1 python main.py``: ComfyUI keeps cudaMallocAsync."""
    yield from _server(comfy_base, artifacts, "server_keep_cuda_malloc_async", env={OPT_OUT_VAR: "1"})


def _device(server) -> str:
    return client.http_json(server.url, "/system_stats")["devices"][0]["name"]


def _bcg_lines(server, start: str) -> list[str]:
    """Server log lines that hold ``start`` (the log prefix before it varies by version)."""
    return [line for line in server.log_lines() if start in line]


def _run_and_twin(server, seed: int, prefix: str, record: dict) -> dict:
    """Run the latent workflow with BCG, then its eager twin; record the run, the session and
    whether the two latents are bit-equal. Returns the run's ``last_run``."""
    prompt = latent_workflow(seed, prefix=f"{prefix}/bcg")
    run = run_prompt(server, prompt)  # an execution error (e.g. in the warm-up) fails here
    entry = client.wait(server.url, run.prompt_id, timeout=60)
    session = session_by_id(client.bcg_status(server.url), run.events[-1]["id"])
    record.update(
        run=run.last_run, warmup=session["last_warmup"], disabled=session["disabled"], captures=session["captures"]
    )

    twin = run_prompt(server, eager_twin(prompt, f"{prefix}/eager"))
    reference = saved_latent(server.base, client.wait(server.url, twin.prompt_id, timeout=60))
    out = saved_latent(server.base, entry)
    record["equal"] = bool(out.shape == reference.shape and torch.equal(out, reference))
    return run.last_run


def test_plain_start_switches_to_native_allocator_and_replays(plain_server, summary):
    device = _device(plain_server)
    switched = _bcg_lines(plain_server, SWITCH_LINE)
    record = summary["default_allocator"] = {"device": device, "allocator_lines": switched}
    assert "cudaMallocAsync" not in device, (
        f"the prestartup script did not switch the allocator: {device}\n{plain_server.log_tail()}"
    )
    if not switched:
        pytest.skip(
            f"ComfyUI did not pick cudaMallocAsync on this machine ({device}), so the prestartup script had nothing to switch"
        )
    allocator_lines = [line for line in plain_server.log_lines() if "[BCG]" in line and "cudaMallocAsync" in line]
    assert allocator_lines == switched and len(switched) == 1, allocator_lines

    last = _run_and_twin(plain_server, 31, "bcg_default_allocator", record)
    assert record["disabled"] is None and record["warmup"]["refusal"] is None, record
    assert last["calls"] == STEPS and last["replayed"] == STEPS and last["eager"] == {}, last
    assert record["equal"], "the replayed result differs from its eager twin"


def test_opt_out_keeps_cuda_malloc_async_and_runs_eager(keep_async_server, summary):
    device = _device(keep_async_server)
    kept = _bcg_lines(keep_async_server, KEEP_LINE)
    record = summary["keep_cuda_malloc_async"] = {"device": device, "allocator_lines": kept}
    if "cudaMallocAsync" not in device:
        pytest.skip(
            f"ComfyUI does not pick cudaMallocAsync on this machine ({device}): nothing for {OPT_OUT_VAR} to keep"
        )
    assert len(kept) == 1 and not _bcg_lines(keep_async_server, SWITCH_LINE), keep_async_server.log_tail()

    last = _run_and_twin(keep_async_server, 32, "bcg_keep_cuda_malloc_async", record)
    reason = record["disabled"]
    assert reason and reason.startswith(REFUSAL) and f"{OPT_OUT_VAR}=1" in reason, reason
    assert record["warmup"]["refusal"] == reason and record["captures"] == 0, record
    assert last["calls"] == STEPS and last["replayed"] == 0 and last["eager"] == {f"disabled: {reason}": STEPS}, last
    assert record["equal"], "the eager result under cudaMallocAsync differs from its eager twin"
