"""gpu layer: memory pressure and partial loads on real CUDA graphs, through ComfyUI's own memory
management. A small Z-Image (two main blocks, real widths) keeps each test to seconds.

- out of memory during a warm-up: the shapes that do not fit are listed with the reason, what
  was captured before keeps replaying exactly;
- deleting the BCG model returns every byte of graph memory (``memory_reserved`` before/after);
- graph memory is added to ComfyUI's VRAM reservation while it plans loads, and only then;
- a partial (lowvram) load: the run is eager with the reason and equals eager; once the model is
  fully loaded again the moved weights are detected and never replayed.
"""

import pytest
import torch
from bcg_testing import WARMUP_ONLY, conds, release_cuda_memory

from bcg_runtime.comfy import api
from bench import synthetic
from bcg_runtime.comfy.hooks import session_of

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.comfy,
    pytest.mark.skipif(
        not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"
    ),
]
FAMILY = "zimage"
GiB = 2**30


@pytest.fixture(scope="module")
def model():
    patcher = synthetic.load_model(FAMILY, depth=2, seed=0, device="cuda")
    yield patcher
    del patcher
    release_cuda_memory(unload=True)


def sample(model, size, seed=5, cfg=1.0):
    positive, negative = conds(FAMILY)
    return synthetic.sample(model, FAMILY, size, size, 2, cfg, positive, negative, seed=seed)


def test_out_of_memory_during_warmup_lists_what_was_skipped_and_keeps_what_was_captured(model):
    positive, negative = conds(FAMILY)
    warmed = api.apply(model, "full", capture=WARMUP_ONLY)
    first = api.warm_up(warmed, "256x256", "", "1", positive, negative)
    session = session_of(warmed)
    assert first.captured >= 1, first.text()
    captured = [e.label for e in session.runner.entries()]

    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction((torch.cuda.memory_reserved() + 1 * GiB) / total)
    try:  # 4096² needs several GiB of activations; 512² fits in what is left
        second = api.warm_up(warmed, "4096x4096, 512x512", "", "1", positive, negative)
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
    text = second.text()
    print(text)
    assert "4096x4096" in text and "out of memory" in text, text
    assert [e.label for e in session.runner.entries()][: len(captured)] == captured

    eager = sample(model, 256)
    out = sample(warmed, 256)
    assert session.last_run["state"] == "replayed", session.last_run
    assert torch.equal(out, eager)


def warm_sample_and_delete(model) -> tuple[int, int]:
    """Apply, warm up 512² and 1024², sample; (graph bytes, reserved bytes with the graphs)."""
    positive, negative = conds(FAMILY)
    warmed = api.apply(model, "breakable", capture=WARMUP_ONLY)
    report = api.warm_up(warmed, "512x512, 1024x1024", "", "1", positive, negative)
    sample(warmed, 1024)
    assert report.captured >= 2, report.text()
    graph_bytes = session_of(warmed).runner.memory_bytes
    return graph_bytes, release_cuda_memory()


def test_deleting_the_bcg_model_returns_its_graph_memory(model):
    """Reserved memory before and after a BCG model's life. The first life in a process may keep
    the capture stream's cuBLAS workspace (one per process and device, 32 MiB on Hopper); from
    then on every model must give back all it took."""
    sample(model, 1024)  # the base model loaded, eager's cache warmed
    first_before = release_cuda_memory()
    warm_sample_and_delete(model)
    before = release_cuda_memory()
    graph_bytes, during = warm_sample_and_delete(model)
    after = release_cuda_memory()
    print(f"reserved: process start {first_before / 2**20:.0f} MiB, after a first BCG model {before / 2**20:.0f} MiB, "
          f"with graphs {during / 2**20:.0f} MiB (graphs {graph_bytes / 2**20:.0f} MiB), after deleting {after / 2**20:.0f} MiB")  # fmt: skip
    assert before - first_before <= 64 * 2**20, "more than the capture stream's workspace stayed after the first model"
    assert graph_bytes > 0 and during >= before + graph_bytes // 2, "the graphs should have held memory"
    assert after <= before, f"{(after - before) / 2**20:.1f} MiB still reserved after the BCG model was deleted"


def test_graph_memory_is_reserved_while_comfyui_plans_loads(model, monkeypatch):
    import comfy.model_management as mm

    positive, negative = conds(FAMILY)
    warmed = api.apply(model, "full", capture=WARMUP_ONLY)
    api.warm_up(warmed, "512x512", "", "1", positive, negative)
    graph_bytes = session_of(warmed).runner.memory_bytes
    base = mm.EXTRA_RESERVED_VRAM
    seen = []
    real_load = mm.load_models_gpu

    def watching_load(*args, **kwargs):
        seen.append(mm.EXTRA_RESERVED_VRAM)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(mm, "load_models_gpu", watching_load)
    sample(warmed, 512)
    assert graph_bytes > 0 and seen and all(s == base + graph_bytes for s in seen), (seen, base, graph_bytes)
    assert mm.EXTRA_RESERVED_VRAM == base


def test_partial_load_runs_eager_with_the_reason_and_moved_weights_never_replay(model, monkeypatch):
    """ComfyUI loads the model partly when VRAM looks short (here: a reservation that leaves room
    for half the weights). Graphs would read streamed weights: the run must be eager, say lowvram,
    and equal eager; after a full reload the weights sit elsewhere, so the graphs are dropped."""
    import comfy.model_management as mm

    positive, negative = conds(FAMILY)
    warmed = api.apply(model, "full", capture=WARMUP_ONLY)
    api.warm_up(warmed, "256x256", "", "1", positive, negative)
    session = session_of(warmed)
    eager_full = sample(model, 256)

    mm.unload_all_models()
    free = mm.get_free_memory(mm.get_torch_device())
    monkeypatch.setattr(mm, "EXTRA_RESERVED_VRAM", mm.EXTRA_RESERVED_VRAM + free - model.model_size() // 2)
    out = sample(warmed, 256)
    run = session.last_run
    monkeypatch.undo()
    assert model.model.model_lowvram or model.loaded_size() < model.model_size(), "ComfyUI did not load partially"
    assert run["state"] == "off" and run["replayed"] == 0, run
    assert all(reason.startswith("disabled: lowvram") for reason in run["eager"]), run
    assert torch.equal(out, eager_full)

    mm.unload_all_models()
    out = sample(warmed, 256)
    run = session.last_run
    assert torch.equal(out, eager_full)
    assert run["replayed"] == 0 or session.runner.entries(), run  # never a replay on dropped graphs
    if run["replayed"] == 0:
        assert any("weights moved" in reason for reason in run["eager"]), run
