"""Zero-config replay. Capture on first call (BCG Apply's default policy): a workflow with only BCG Apply between the
loader and the KSampler replays from the second step on, bit-equal to eager, with every eager call
counted under its reason; a small memory budget evicts least recently used graphs and says so; a
weight change drops graphs and the next calls capture again. CPU stand-in here, real graphs on
the H200 (the same tests under scripts/gpu_suite.sh). And a warm-up from the workflow's own LATENT."""

import pytest
import torch
from bcg_testing import conds, first_weight_moved, session_of
from test_bcg_nodes import QWEN, models  # noqa: F401  (fixture)

from bcg_runtime.core.stats import ProofTimes, size_class
from bench import synthetic

pytestmark = pytest.mark.comfy
FIRST = "first call, captured"


def _first_calls(run):
    return sum(n for reason, n in run["eager"].items() if reason.startswith(FIRST))


def test_only_bcg_apply_replays_from_the_second_step(pack, models, standin_graphs):
    _, nodes = pack
    model = models(QWEN)
    positive, negative = conds(QWEN)  # cond 40 and uncond 17 tokens: two signatures per step
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args  # defaults: capture on first call
    session = session_of(bcg_model)
    assert session.config.capture.value == "on first call"
    status = session.status()  # the details view shows the choice and what it became: "auto (full)"
    assert (status["mode"], status["mode_from_auto"]) == ("full", True), status

    out = synthetic.sample(bcg_model, QWEN, 64, 64, 4, 2.5, positive, negative, seed=3)
    assert torch.equal(out, synthetic.sample(model, QWEN, 64, 64, 4, 2.5, positive, negative, seed=3))
    run = session.last_run
    assert run["calls"] == 8 and run["replayed"] == 6, run
    assert run["eager"] == {f"{FIRST}: 64x64 txt40 b1": 1, f"{FIRST}: 64x64 txt17 b1": 1}, run
    assert session.runner.stats.captures == 2

    # A second request: every call replays, nothing new is captured.
    out2 = synthetic.sample(bcg_model, QWEN, 64, 64, 4, 2.5, positive, negative, seed=4)
    assert torch.equal(out2, synthetic.sample(model, QWEN, 64, 64, 4, 2.5, positive, negative, seed=4))
    assert session.last_run["replayed"] == session.last_run["calls"] == 8
    assert session.runner.stats.captures == 2


@pytest.mark.capture_costs
def test_a_first_call_capture_that_would_not_repay_waits_for_the_shape_to_come_back(pack, models, standin_graphs):
    """Through the sampler: the run's steps count down the calls left; with measured costs that 3
    calls cannot repay (30 ms saved against a 50 ms capture), a new shape's run stays eager under its
    reason (and equal to eager); the same shape in the next run counts its 2 runs (60 ms) and is
    captured on its first call and replays the rest."""
    _, nodes = pack
    model = models(QWEN)
    positive, _ = conds(QWEN)
    (bcg_model,) = nodes["BCGApply"].execute(model, "full").args
    session = session_of(bcg_model)
    assert session.status()["mode_from_auto"] is False  # chosen, not resolved
    costs = session.runner.stats.costs
    latent = synthetic.empty_latent(QWEN, 64, 64)  # the DiT's input: cfg 1 runs the positive alone
    costs.record(0.04, ProofTimes(eager=0.02, host=0.02, replay=0.01), size_class(latent))  # 50 ms, 10 ms saved
    status = session.status()  # what /bcg/status shows of the weighing
    assert (status["capture_cost_ms"], status["replay_saving_ms"]) == (50.0, 10.0), status
    for run_number in (1, 2):
        out = synthetic.sample(bcg_model, QWEN, 64, 64, 4, 1.0, positive, positive, seed=3)
        assert torch.equal(out, synthetic.sample(model, QWEN, 64, 64, 4, 1.0, positive, positive, seed=3))
        run = session.last_run
        if run_number == 1:
            [(reason, n)] = run["eager"].items()
            assert n == 4 and reason.startswith("not captured yet: the calls left would not repay a capture"), run
        else:
            assert run["replayed"] == 3 and _first_calls(run) == 1, run


def test_small_budget_evicts_least_recently_used_and_counts_it(pack, models, standin_graphs):
    _, nodes = pack
    model = models(QWEN)
    positive, _ = conds(QWEN)
    (bcg_model,) = nodes["BCGApply"].execute(model, "full", 1).args  # 1 MiB: one graph at a time
    session = session_of(bcg_model)
    for width in (64, 80, 64):
        out = synthetic.sample(bcg_model, QWEN, width, 64, 3, 1.0, positive, positive, seed=3)
        assert torch.equal(out, synthetic.sample(model, QWEN, width, 64, 3, 1.0, positive, positive, seed=3)), width
        run = session.last_run
        assert run["replayed"] == 2 and _first_calls(run) == 1, run
    assert session.runner.stats.evictions == 2 and len(session.runner.entries()) == 1
    assert run["evicted"] == 1 and "evicted 1 graph (memory budget)" in run["summary"], run
    assert session.status()["evictions"] == 2


def test_weights_moved_drop_graphs_and_the_next_call_captures_again(pack, models, standin_graphs):
    _, nodes = pack
    model = models(QWEN)
    positive, _ = conds(QWEN)
    (bcg_model,) = nodes["BCGApply"].execute(model, "full").args
    session = session_of(bcg_model)
    synthetic.sample(bcg_model, QWEN, 64, 64, 2, 1.0, positive, positive, seed=3)
    with first_weight_moved(model):
        out = synthetic.sample(bcg_model, QWEN, 64, 64, 3, 1.0, positive, positive, seed=3)
        assert torch.equal(out, synthetic.sample(model, QWEN, 64, 64, 3, 1.0, positive, positive, seed=3))
        run = session.last_run
        assert run["replayed"] == 2 and _first_calls(run) == 1, run
        assert session.runner.disabled_reason is None and session.stale is None


def test_warmup_from_the_workflow_latent_captures_batch_2_cfg_calls(pack, models, standin_graphs):
    """Latent batch 2 at cfg > 1 with cond/uncond of different lengths, nothing typed: the warm-up
    captures exactly the calls the KSampler sends, and sampling replays all of them."""
    _, nodes = pack
    model = models(QWEN)
    positive, negative = conds(QWEN)
    latent = {"samples": synthetic.empty_latent(QWEN, 64, 64, batch=2)}
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture="warm-up only").args
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "", "", "1", positive, negative, latent).args
    assert "64x64 txt40 b2: captured" in report and "64x64 txt17 b2: captured" in report, report

    out = synthetic.sample(warmed, QWEN, 64, 64, 3, 2.5, positive, negative, seed=3, latent=latent["samples"])
    reference = synthetic.sample(model, QWEN, 64, 64, 3, 2.5, positive, negative, seed=3, latent=latent["samples"])
    assert torch.equal(out, reference)
    run = session_of(warmed).last_run
    assert run["replayed"] == run["calls"] == 6, run


def test_warmup_latent_without_conditioning_names_the_fix(pack, models):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(models(QWEN), "auto").args
    latent = {"samples": synthetic.empty_latent(QWEN, 64, 64)}
    out = nodes["BCGWarmupCapture"].execute(bcg_model, "", "256", "1", None, None, latent)
    assert out.block_execution.startswith(
        "BCG Warmup Capture: latent: connected without positive; connect the workflow's conditioning"
    )
    # validation cannot see whether a latent is connected: an empty resolutions passes there and
    # is judged when the node runs (tests/comfy/test_input_errors.py)
    assert nodes["BCGWarmupCapture"].validate_inputs(resolutions="") is True


def test_warmup_under_a_small_budget_reports_the_shapes_it_evicted_again(pack, models, standin_graphs):
    """Three resolutions warmed under a budget that holds one graph: each shape is reported once,
    the one kept as captured, every other as evicted, and the totals count what is held."""
    _, nodes = pack
    model = models(QWEN)
    positive, negative = conds(QWEN)
    (bcg_model,) = nodes["BCGApply"].execute(model, "full", 1).args  # 1 MiB: one graph at a time
    _, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64,80x64,96x64", "", "1", positive, negative).args
    session = session_of(bcg_model)
    [kept] = session.runner.entries()
    shapes = [line for line in report.splitlines() if " b1: " in line]
    labels = [line.split(": ", 1)[0] for line in shapes]
    assert len(labels) == len(set(labels)) >= 3, report
    for line in shapes:
        if line.startswith(kept.label + ":"):
            assert ": captured," in line and "replay exact" in line, report
        else:
            assert ": evicted: captured and proven, then evicted" in line, report
    evicted = len(shapes) - 1
    assert "1 new captures" in report and f"({evicted} evicted again, memory budget)" in report, report
