"""What the pack writes to ComfyUI's log: one start-up line when BCG cannot run in the process,
then one line per run (and per warm-up) and no reason twice.

ComfyUI runs on the CPU here (the comfy layer sets ``--cpu``), which is the case the issue saw:
"no CUDA" logged five times per run. The stand-in graph backend covers a run that replays.
"""

import logging

import pytest
import torch
from bcg_testing import WARMUP_ONLY, conds, session_of

from bench import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "zimage"
#: The two "BCG cannot run" tests read the log of a ComfyUI started with --cpu (the CPU comfy layer).
cpu_process_only = pytest.mark.skipif(
    torch.cuda.is_available(),
    reason="reads the log of a --cpu ComfyUI process; on CUDA BCG runs (the CPU comfy layer covers this)",
)


@pytest.fixture(scope="module")
def model():
    return synthetic.load_model(FAMILY, depth=1, seed=0)


def bcg_lines(caplog, level=logging.INFO) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("[BCG]") and r.levelno >= level]


@cpu_process_only
def test_one_start_up_line_when_bcg_cannot_run(pack, monkeypatch, caplog):
    from bcg_runtime.comfy import startup

    monkeypatch.setattr(startup, "_reported", False)
    caplog.set_level(logging.INFO)
    first, second = startup.report_process(), startup.report_process()
    assert first == second == "no CUDA: ComfyUI runs with --cpu; graphs need an NVIDIA GPU, models run unchanged"
    assert bcg_lines(caplog) == [f"[BCG] BCG cannot run in this ComfyUI process: {first}"]
    assert caplog.records[-1].levelno == logging.WARNING


@cpu_process_only
def test_a_run_under_cpu_logs_one_line_and_the_reason_once(pack, model, caplog):
    _, nodes = pack
    positive, negative = conds(FAMILY)
    caplog.set_level(logging.DEBUG)
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, negative).args
    synthetic.sample(warmed, FAMILY, 64, 64, 2, 1.0, positive, negative, seed=3)
    assert bcg_lines(caplog) == ["[BCG] Z-Image: 2 DiT calls ran eager, BCG is off (no CUDA)"]
    # the full reason went to the debug log once per place at most, never above it
    assert "off: no CUDA" in report

    status = session_of(warmed).status()
    reason = f"disabled: {status['disabled']}"
    assert status["disabled_scope"] == "process" and status["disabled_short"] == "no CUDA"
    assert status["last_run"]["eager_kinds"] == {reason: "disabled"} and status["eager_kinds"] == {reason: "disabled"}
    assert status["last_warmup"]["refusal_short"] == "no CUDA"


def test_a_run_that_replays_logs_its_warm_up_and_run_once_each(pack, model, standin_graphs, caplog):
    _, nodes = pack
    positive, negative = conds(FAMILY)
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    caplog.set_level(logging.INFO)
    warmed, _ = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, negative).args
    synthetic.sample(warmed, FAMILY, 64, 64, 2, 1.0, positive, negative, seed=3)
    synthetic.sample(warmed, FAMILY, 96, 64, 2, 1.0, positive, negative, seed=3)  # not warmed: eager
    lines = bcg_lines(caplog)
    warmups = [line for line in lines if line.startswith("[BCG] warm-up of Z-Image: ")]
    runs = [line for line in lines if line.startswith("[BCG] Z-Image: ")]
    assert len(warmups) == 1 and "new captures in" in warmups[0], lines
    assert runs[0] == "[BCG] Z-Image: replayed 2/2 calls", lines
    assert runs[1].startswith("[BCG] Z-Image: replayed 0/2 calls; eager: 2x not captured: 96x64 ") and len(runs) == 2, (
        lines
    )
    assert sum("not captured: 96x64" in line for line in lines) == 1, lines  # the reason once, in the run's line
    status = session_of(warmed).status()
    assert set(status["last_run"]["eager_kinds"].values()) == {"not_captured"} and status["disabled_scope"] is None
