"""ComfyUI's model compiler (0.34+) and BCG, on every host (docs/compatibility.md).

- What a DiT's calls into the compiler become under BCG (``bench.compiler_sim`` makes the
  real FLUX.1 class call a compiler the way MiniMax H3 and Qwen-Image 2.1 call theirs): eager
  forwards make every call; a replayed forward makes only the calls placed outside BCG's hook
  (begin/end around the DIFFUSION_MODEL wrappers) and none of those inside ``_forward``; the
  latents stay bit-equal to eager. Here the compiler is a recorder of those calls; the real
  comfy-aimdo 0.6.0 malloc graph around the same forwards is ``test_compiler_cuda.py`` (H200).
- A module carrying ComfyUI's own CUDA graph makes the call eager with the ``core_graph`` reason.
- On a ComfyUI without the compiler (0.8.0, 0.33.0, and the assembled 0.33 host, whose
  ``cli_args`` has no ``--disable-comfy-compiler``) BCG touches no flag and adds no note.
- A bad ``BCG_COMFY_COMPILER`` is BCG Apply's error, naming the variable and the values.
"""

import contextlib

import pytest
import torch
from bcg_testing import conds, session_of
from test_bcg_nodes import models  # noqa: F401  (fixture)

from bench import compiler_sim
from bench import synthetic

pytestmark = pytest.mark.comfy
FLUX = "flux"
STEPS = 3


class RecordingCompiler(compiler_sim.Compiler):
    """Records what the DiT calls, in order: begin, block (a block's scope), done (the loop's last
    scope closed), pause, end."""

    source = "recording"

    def __init__(self):
        super().__init__()
        self.events = []
        self.open = False

    def enabled(self, device):
        return True

    def _begin(self, device):
        self.events.append("begin")
        self.open = True

    def _block(self, device, module):
        self.events.append("block" if module is not None else "done")

    def end(self):
        self.events.append("end")
        self.open = False

    def _paused(self):
        self.events.append("pause")
        return contextlib.nullcontext()

    def _active(self):
        return self.open

    def _finish(self, run):
        return run

    def take(self):
        events, self.events = self.events, []
        return events


def _sample(model, seed=3):
    positive, negative = conds(FLUX)
    return synthetic.sample(model, FLUX, 64, 64, STEPS, 1.0, positive, negative, seed=seed)


#: One eager FLUX.1 forward of depth 1 (one double, one single block), as the DiT calls the compiler.
EAGER_FORWARD = ["begin", "block", "pause", "block", "done", "end"]


@pytest.mark.parametrize("placement,replayed_forward", [("outer", ["begin", "end"]), ("inner", [])])
def test_a_replay_skips_the_compiler_calls_inside_bcgs_hook_and_stays_bit_equal(
    pack, models, standin_graphs, placement, replayed_forward
):
    _, nodes = pack
    model = models(FLUX)
    recorder = RecordingCompiler()
    with compiler_sim.simulate(model.model.diffusion_model, ("double_blocks", "single_blocks"), recorder, placement):
        eager = _sample(model)
        assert recorder.take() == EAGER_FORWARD * STEPS
        (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
        _sample(bcg_model)  # the first call captures (its forward runs), the others replay
        recorder.take()
        out = _sample(bcg_model)
        run = session_of(bcg_model).last_run
        assert run["replayed"] == run["calls"] == STEPS, run
        assert recorder.take() == replayed_forward * STEPS
        assert torch.equal(out, eager)
    assert torch.equal(_sample(model), eager)  # the class is ComfyUI's own again
    assert recorder.take() == []


def test_a_module_that_comfyui_runs_as_a_cuda_graph_runs_eager_with_the_core_graph_reason(pack, models, standin_graphs):
    _, nodes = pack
    model = models(FLUX)
    eager = _sample(model)
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    _sample(bcg_model)
    block = bcg_model.model.diffusion_model.single_blocks[0]
    block._comfy_graph = {"graph": object(), "signature": None}  # what comfy/model_prefetch.py (0.34+) keeps there
    try:
        out = _sample(bcg_model)
        run = session_of(bcg_model).last_run
        assert run["replayed"] == 0 and run["calls"] == STEPS, run
        (reason,) = run["eager"]
        assert (
            "ComfyUI already runs diffusion_model.single_blocks.0 as a CUDA graph" in reason
            and "does not graph a graph" in reason
        )
        assert torch.equal(out, eager)
    finally:
        del block._comfy_graph
    out = _sample(bcg_model)
    assert session_of(bcg_model).last_run["replayed"] > 0
    assert torch.equal(out, eager)


def test_the_core_graph_reason_has_its_own_kind():
    from bcg_runtime.comfy.fingerprint import core_graph_reason
    from bcg_runtime.core.reasons import CORE_GRAPH, kind_of

    assert kind_of(core_graph_reason("diffusion_model.blocks.3")) == CORE_GRAPH.value == "core_graph"


def test_on_a_comfyui_without_the_compiler_bcg_touches_no_flag_and_says_nothing(pack, models, standin_graphs):
    import comfy.cli_args

    from bcg_runtime.comfy import compiler

    _, nodes = pack
    model = models(FLUX)
    if hasattr(comfy.cli_args.args, compiler.FLAG):
        pytest.skip("this ComfyUI has --disable-comfy-compiler (0.34+): the GPU suite measures it there")
    assert not compiler.compiler_active(model.load_device)
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    _sample(bcg_model)
    run = session_of(bcg_model).last_run
    assert run["notes"] == [] and compiler.ASIDE_NOTE not in run["summary"], run
    assert not hasattr(comfy.cli_args.args, compiler.FLAG)


def test_a_bad_compiler_policy_is_bcg_applys_error_naming_the_variable(pack, models, monkeypatch):
    _, nodes = pack
    monkeypatch.setenv("BCG_COMFY_COMPILER", "sideways")
    with pytest.raises(ValueError, match=r"BCG_COMFY_COMPILER: 'sideways' is not a policy; accepted: aside, inside"):
        nodes["BCGApply"].execute(models(FLUX), "auto")


@pytest.mark.skipif(
    torch.cuda.is_available(),
    reason="checks the CPU run; on CUDA test_compiler_cuda.py runs the tool with the compiler",
)
def test_the_compiler_benchmark_runs_every_mode_on_cpu_and_says_why_there_is_no_compiler(tmp_path):
    import json
    import os
    import subprocess
    import sys

    from bcg_testing import ROOT

    out = tmp_path / "compiler.json"
    command = [sys.executable, "-m", "bench.compiler", "--comfyui", os.environ["COMFYUI_PATH"],
               "--placements", "outer", "--repeats", "1", "--json", str(out)]  # fmt: skip
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "compiler: no CUDA: the malloc graph needs an NVIDIA GPU" in proc.stdout
    report = json.loads(out.read_text())
    env, rows = report["env"], report["rows"]
    assert env["compiler"] is None and env["simulated_flags"] == [] and env["dynamic_vram"] is False
    assert [r["mode"] for r in rows] == ["eager", "eager-off", "bcg-aside", "bcg-inside"]
    assert all(r["error"] is None and r["equal_to_eager"] is True and r["compiler"] == [] for r in rows), rows
    for r in rows[2:]:  # BCG Apply on a CPU: every call eager, saying why
        assert r["replayed"] == 0 and r["calls"] > 0 and all("no CUDA" in reason for reason in r["eager_reasons"]), r
    assert "| outer | bcg-aside |" in proc.stdout.splitlines()[-2]
