"""Capture on first sight (``capture_first_call=True``) and LRU eviction (``RunnerLimits.evict_lru``):
the first call of a signature is captured, proven and answered with eager's output; later calls
replay; past the entry limit or memory budget the least recently used entry goes. CPU stand-in
(unit layer) and real CUDA graphs (gpu layer); every comparison is ``torch.equal`` to eager."""

import torch

from bcg_runtime.core import Action, Decision, Gate, Pending
from bcg_runtime.core.dispatch import FIRST_CALL, NOT_CAPTURED, NOT_WORTH_IT, STALE
from bcg_runtime.core.stats import ProofTimes, size_class
from test_runner import inputs, model_on


def test_first_call_captures_and_returns_eager_then_replays(device, make_runner):
    model = model_on(device, n_blocks=2)
    runner = make_runner()
    with torch.inference_mode():
        first_args = inputs(device, seed=0)
        first = runner(model, first_args, capture_first_call=True)
        assert torch.equal(first, model(*first_args))
        assert runner.stats.captures == 1 and runner.stats.hits == 0
        assert [r for r in runner.stats.eager] == [f"{FIRST_CALL}: {runner.entries()[0].label}"]
        for seed in (1, 2):
            args = inputs(device, seed=seed)
            assert torch.equal(runner(model, args, capture_first_call=True), model(*args))
    assert runner.stats.hits == 2 and runner.stats.captures == 1


def test_without_capture_first_call_a_new_shape_only_runs_eager(device, make_runner):
    model = model_on(device, n_blocks=1)
    runner = make_runner()
    with torch.inference_mode():
        runner(model, inputs(device, n_img=8))
    assert runner.stats.captures == 0
    assert next(iter(runner.stats.eager)).startswith(NOT_CAPTURED)


def test_entry_limit_evicts_least_recently_used(device, make_runner):
    model = model_on(device, n_blocks=1)
    runner = make_runner(max_entries=2, evict_lru=True)
    shapes = {n: inputs(device, n_img=n) for n in (4, 8, 12)}
    with torch.inference_mode():
        runner(model, shapes[4], capture_first_call=True)
        runner(model, shapes[8], capture_first_call=True)
        runner(model, shapes[4], capture_first_call=True)  # 4 is now the most recently used
        out = runner(model, shapes[12], capture_first_call=True)  # evicts 8, not 4
        assert torch.equal(out, model(*shapes[12]))
        assert runner.stats.evictions == 1 and len(runner.entries()) == 2
        hits = runner.stats.hits
        assert torch.equal(runner(model, shapes[4], capture_first_call=True), model(*shapes[4]))
        assert runner.stats.hits == hits + 1, "the recently used shape was evicted"
        runner(model, shapes[8], capture_first_call=True)  # captured again, evicting 12
    assert runner.stats.captures == 4 and runner.stats.evictions == 2


def test_memory_budget_evicts_and_releases_the_pool(device, make_runner):
    """A budget below one entry's memory: every new shape evicts the last, the pool is released
    with it, and graph memory does not grow over a stream of shapes."""
    model = model_on(device, n_blocks=2)
    runner = make_runner(evict_lru=True, memory_budget_bytes=1)
    held = []
    with torch.inference_mode():
        for n in (4, 8, 12, 16, 4, 8):
            args = inputs(device, n_img=n)
            assert torch.equal(runner(model, args, capture_first_call=True), model(*args))
            assert len(runner.entries()) == 1
            held.append(runner.memory_bytes)
    assert runner.stats.evictions == 5
    # Shapes 4 and 8 come back after 16: with the old pools released they hold what they held first.
    assert held[4:] == held[:2], f"graph memory kept what evicted shapes held: {held}"


def test_a_blocked_shape_is_not_captured_again_on_sight(device, make_runner):
    model = model_on(device, n_blocks=1)
    runner = make_runner()

    def breaks_under_capture(*args):
        from bcg_runtime.core import is_capturing

        if is_capturing():
            raise RuntimeError("host sync")
        return model(*args)

    with torch.inference_mode():
        args = inputs(device)
        assert torch.equal(runner(breaks_under_capture, args, capture_first_call=True), model(*args))
        assert torch.equal(runner(breaks_under_capture, args, capture_first_call=True), model(*args))
    assert runner.stats.capture_failures == 1
    assert runner.stats.eager == {"capture failed: RuntimeError: host sync": 2}


def test_later_captures_run_no_warmup_since_the_proofs_eager_run_comes_first(device, make_runner):
    """Each eager warm-up run costs a whole forward. After a device's first capture (two warm-ups,
    then the proof's eager run) the proof's eager run of the live call comes before the capture
    and does a shape's lazy work, so none is run (RunnerLimits.warmup_runs_after_first)."""
    calls = []

    def fn(x):
        calls.append(x.shape[0])
        return x * 2

    runner = make_runner()
    with torch.inference_mode():
        assert runner.capture(fn, (torch.ones(3, device=device),)).ok
        first = len(calls)
        calls.clear()
        assert runner.capture(fn, (torch.ones(5, device=device),)).ok
    # warm-ups + the capture itself + the proof's eager call (the replay does not call fn)
    assert first == 2 + 1 + 1
    assert len(calls) == 0 + 1 + 1


def test_a_capture_waits_while_the_calls_left_cannot_repay_it(device, make_runner):
    """Measured costs weigh a first-sight capture: with 3 calls left saving 15 ms each against a
    50 ms capture, the run stays eager (counted, exact); the shape coming back in a new run (more
    calls left again) counts twice (2 runs x 3 calls x 15 ms > 50 ms) and is captured then."""
    model = model_on(device, n_blocks=1)
    runner = make_runner()
    old, new = inputs(device, n_img=4), inputs(device, n_img=8)
    with torch.inference_mode():
        runner(model, old, capture_first_call=True, calls_left=7)  # nothing measured yet: captured
        # the device's first capture carries lazy init: its saving is a sample, its cost is not
        costs = runner.stats.costs
        assert runner.stats.captures == 1 and costs.samples == 1 and not costs.overheads
        runner.stats.costs = type(runner.stats.costs)()
        saved_15 = ProofTimes(eager=0.020, host=0.020, replay=0.005)
        runner.stats.costs.record(0.045, saved_15, size_class(new[0]))  # 50 ms cost, 15 ms saved
        for left in (3, 2, 1, 0):  # one run: a count down
            assert torch.equal(runner(model, new, capture_first_call=True, calls_left=left), model(*new))
        assert runner.stats.captures == 1 and runner.stats.eager[NOT_WORTH_IT] == 4
        out = runner(model, new, capture_first_call=True, calls_left=3)  # the next run: the shape recurs
        assert torch.equal(out, model(*new))
        assert runner.stats.captures == 2
        assert torch.equal(runner(model, new, capture_first_call=True, calls_left=2), model(*new))
        assert runner.stats.hits == 1
        # a dearer capture (100 ms) waits for a third run: 2 x 3 x 15 = 90 ms < 100, 3 x 3 x 15 > 100
        runner.stats.costs = type(runner.stats.costs)()
        rare = inputs(device, n_img=6)
        runner.stats.costs.record(0.095, saved_15, size_class(rare[0]))
        for run in range(3):
            for left in (3, 2, 1, 0):
                assert torch.equal(runner(model, rare, capture_first_call=True, calls_left=left), model(*rare))
            if run < 2:
                assert runner.stats.captures == 2, run
        assert (
            runner.stats.captures == 3 and runner.stats.eager[NOT_WORTH_IT] == 4 + 4 + 4
        )  # `new`'s run, then 2 of `rare`'s
        # enough calls left repay a capture at once (4 x 15 ms > 50 ms)
        runner.stats.costs = type(runner.stats.costs)()
        wide = inputs(device, n_img=12)
        runner.stats.costs.record(0.045, saved_15, size_class(wide[0]))
        runner(model, wide, capture_first_call=True, calls_left=4)
        assert runner.stats.captures == 4


def test_a_caller_that_counts_the_runs_gets_calls_times_runs_not_its_square(device, make_runner):
    """``runs_seen``: a signature met once per run (a key holding the step) cannot be told to be in
    a new run by ``calls_left`` growing, so its caller counts the runs and passes ``calls_left`` as
    one run's calls. Expected calls are then 2 calls x the earlier runs: with 15 ms saved against
    a 100 ms capture, 2 x 3 x 15 = 90 ms waits, 2 x 4 x 15 = 120 ms is captured, in the fifth run
    (counting the runs again on top would make it 3 x 4 x 15 in the fourth)."""
    model = model_on(device, n_blocks=1)
    runner = make_runner()
    step = inputs(device, n_img=6)
    runner.stats.costs.record(0.095, ProofTimes(eager=0.020, host=0.020, replay=0.005), size_class(step[0]))
    with torch.inference_mode():
        for earlier_runs in range(4):
            for _ in range(2):  # cond and uncond: the same key twice a run
                out = runner(model, step, capture_first_call=True, calls_left=2, runs_seen=earlier_runs)
                assert torch.equal(out, model(*step))
            assert runner.stats.captures == 0, earlier_runs
        assert runner.stats.eager[NOT_WORTH_IT] == 8
        assert torch.equal(runner(model, step, capture_first_call=True, calls_left=2, runs_seen=4), model(*step))
        assert runner.stats.captures == 1
        assert torch.equal(runner(model, step, capture_first_call=True, calls_left=2, runs_seen=4), model(*step))
    assert runner.stats.hits == 1


def test_lookup_asks_for_the_state_only_where_it_decides_and_resolve_binds_it(device, make_runner):
    """Two phases: ``lookup`` decides eager by itself where no state can change the outcome (not
    captured, blocked, disabled) and returns ``Pending`` where it can (an entry to check, a capture
    to bind); the caller takes its state in between (it may disable the runner or drop entries
    there) and ``resolve`` serves, captures or drops under it."""
    model = model_on(device, n_blocks=1)
    runner = make_runner()
    first = Gate(on_first_call=True)
    with torch.inference_mode():
        args = inputs(device, seed=0)
        found = runner.lookup(args, {})
        assert isinstance(found, Decision) and found.action is Action.EAGER and NOT_CAPTURED in found.reason
        pending = runner.lookup(args, {}, gate=first)
        assert isinstance(pending, Pending) and not pending.had_entry
        decision = runner.resolve(pending, "s1")
        assert decision.action is Action.CAPTURE and decision.state == "s1"
        assert torch.equal(runner.execute(decision, model, args, {}), model(*args))
        assert runner.stats.captures == 1
        other = inputs(device, seed=1)
        pending = runner.lookup(other, {})
        assert isinstance(pending, Pending) and pending.had_entry
        decision = runner.resolve(pending, "s1")
        assert decision.action is Action.SERVE
        assert torch.equal(runner.execute(decision, model, other, {}), model(*other))
        assert runner.stats.hits == 1
        pending = runner.lookup(other, {})
        runner.disable("the state changed since warm-up")  # what the caller may do between the phases
        decision = runner.resolve(pending, "s1")
        assert decision.action is Action.EAGER and decision.reason == "disabled: the state changed since warm-up"
        assert len(runner.entries()) == 1
        runner.enable()
        decision = runner.resolve(runner.lookup(other, {}), "s2")  # another state: dropped, not captured again
        assert decision.action is Action.EAGER and decision.reason == STALE and not runner.entries()
        decision = runner.resolve(runner.lookup(other, {}, gate=first), "s2")  # on first call: captured again
        assert decision.action is Action.CAPTURE and decision.state == "s2"
