"""The serving contract of GraphRunner (issue #10), on the CPU stand-in and on real CUDA graphs:
an entry serves only after its replay was bit-equal to eager, only while the state it was captured
under is the caller's state, and never for a call whose tensors sit on more than one device."""

import pytest
import torch

from bcg_runtime.core import Action, CaptureStatus, GraphRunner
from bcg_runtime.core.capture import Unbound
from bcg_runtime.core.dispatch import STALE
from bcg_runtime.core.cpu_graph import RecordingBackend


class Scaled(torch.nn.Module):
    def __init__(self, device):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.full((4,), 2.0, device=device), requires_grad=False)

    def forward(self, x):
        return x * self.weight + 1


def address_state(module: torch.nn.Module) -> tuple:
    return tuple(p.data_ptr() for p in module.parameters())


def test_weights_replaced_after_capture_replay_stale_values_without_a_state(device, make_runner):
    """What a graph does when its weights move: it keeps reading the old memory. The stand-in
    must show this too (it replays by address), or the tests below could not fail.

    The old weight is kept alive: freed, its block could go to the next allocation (on CUDA the
    eager output below took it), and the stale read would show that tensor instead."""
    model = Scaled(device)
    runner = make_runner()
    x = torch.ones(4, device=device)
    with torch.inference_mode():
        assert runner.capture(model, (x,)).ok
        old_weight = model.weight.data
        model.weight.data = torch.full((4,), 5.0, device=device)
        assert torch.equal(model(x), torch.full((4,), 6.0, device=device))
        assert torch.equal(runner(model, (x,)), torch.full((4,), 3.0, device=device))  # stale
        del old_weight


def test_an_entry_serves_only_under_the_state_it_was_captured_with(device, make_runner):
    model = Scaled(device)
    runner = make_runner()
    x = torch.ones(4, device=device)
    with torch.inference_mode():
        assert runner.capture(model, (x,), state=address_state(model)).ok
        assert torch.equal(runner(model, (x,), state=address_state(model)), model(x))
        model.weight.data = torch.full((4,), 5.0, device=device)
        out = runner(model, (x,), state=address_state(model))
        assert torch.equal(out, torch.full((4,), 6.0, device=device))
        assert runner.stats.eager == {STALE: 1} and not runner.entries()
        # A warm-up after the move captures again instead of answering "already captured".
        again = runner.capture(model, (x,), state=address_state(model))
        assert again.status is CaptureStatus.CAPTURED
        assert torch.equal(runner(model, (x,), state=address_state(model)), torch.full((4,), 6.0, device=device))


def test_capture_under_a_new_state_replaces_the_old_entry(device, make_runner):
    model = Scaled(device)
    runner = make_runner()
    x = torch.ones(4, device=device)
    with torch.inference_mode():
        runner.capture(model, (x,), state="a")
        assert runner.capture(model, (x,), state="a").status is CaptureStatus.ALREADY_CAPTURED
        assert runner.capture(model, (x,), state="b").status is CaptureStatus.CAPTURED
        assert runner.drop_unbound("b") == 0 and len(runner.entries()) == 1
        assert runner.drop_unbound("c") == 1 and not runner.entries()


class EqualState:
    """A state that compares by value, as a fingerprint does, and counts how often it is asked."""

    asked = 0

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        EqualState.asked += 1
        return isinstance(other, EqualState) and other.value == self.value

    __hash__ = None


def test_retain_binds_the_entries_it_keeps_to_the_new_equal_state_so_calls_compare_by_identity(device, make_runner):
    """A run takes a new fingerprint object equal to the one its entries were captured under;
    after ``retain`` each call's check of its entry's state is the same object, not a walk."""
    model = Scaled(device)
    runner = make_runner()
    x = torch.ones(4, device=device)
    with torch.inference_mode():
        assert runner.capture(model, (x,), state=EqualState(1)).ok
        now = EqualState(1)
        assert runner.drop_unbound(now) == 0
        EqualState.asked = 0
        for _ in range(3):
            assert torch.equal(runner(model, (x,), state=now), model(x))
        assert runner.stats.hits == 3 and EqualState.asked == 0


def test_an_entry_is_bound_to_the_state_the_caller_gives_after_the_proof(device):
    """A caller whose state changes during the capture itself (a process setting the forward's
    first call settles) binds the entry to what its binding's ``after_capture`` returns once the proof
    passed: the entry serves under that state and not the one passed with the call. Where it
    raises, the capture fails like any other: nothing stored, the key blocked, eager's output."""
    model = Scaled(device)
    setting = {"order": "unsettled"}

    def forward(x):
        setting["order"] = "settled"
        return model(x)

    asked = []

    class Settling(Unbound):
        def after_capture(self, state):
            asked.append(state)
            return (state[0], setting["order"])

    backend = RecordingBackend() if device.type == "cpu" else None
    runner = GraphRunner(backend=backend, name="test")
    x = torch.ones(4, device=device)
    with torch.inference_mode():
        assert runner.capture(forward, (x,), state=("weights", "unsettled"), binding=Settling()).ok
        assert asked == [("weights", "unsettled")]
        assert runner.resolve(runner.lookup((x,), {}), ("weights", "settled")).action is Action.SERVE
        assert runner.resolve(runner.lookup((x,), {}), ("weights", "unsettled")).action is Action.EAGER
        assert runner.capture(forward, (x,), state=("weights", "unsettled"), binding=Settling()).ok
        assert torch.equal(runner(forward, (x,), state=("weights", "settled")), model(x))
        assert runner.stats.hits == 1 and not runner.stats.eager

        class Unreadable(Unbound):
            def after_capture(self, state):
                raise RuntimeError("the state cannot be read")

        failing = GraphRunner(backend=backend, name="test")
        result = failing.capture(forward, (x,), state=("weights", "settled"), binding=Unreadable())
        assert result.status is CaptureStatus.FAILED and "the state cannot be read" in result.reason
        assert torch.equal(result.output, model(x))
        assert not failing.entries() and failing.memory_bytes == 0


class HostCounter:
    """A forward whose result depends on Python state a graph freezes: replay != eager."""

    def __init__(self):
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        return x * self.calls


def test_a_capture_whose_replay_is_not_bit_equal_never_serves(device, make_runner):
    fn = HostCounter()
    runner = make_runner()
    x = torch.ones(4, device=device)
    with torch.inference_mode():
        result = runner.capture(fn, (x,))
        assert result.status is CaptureStatus.NOT_EXACT and not result.ok
        assert result.exact is False and result.max_abs_diff > 0
        assert result.reason == f"replay not exact (max abs diff {result.max_abs_diff:g})"
        assert torch.equal(result.output, x * 4)  # the eager output of the live call (after 2 warm-ups + capture)
        assert not runner.entries()
        out = runner(fn, (x,))
        assert torch.equal(out, x * fn.calls)  # eager, counted under the reason
        assert runner.stats.eager == {result.reason: 1}
        assert runner.capture(fn, (x,)).status is CaptureStatus.SKIPPED  # blocked for good


def test_verify_drops_an_entry_that_stops_matching_eager(device, make_runner):
    model = Scaled(device)
    runner = make_runner()
    x = torch.ones(4, device=device)
    with torch.inference_mode():
        runner.capture(model, (x,))
        assert torch.equal(runner(model, (x,), verify=True), model(x))
        assert runner.stats.hits == 1
        # Weights replaced behind the runner's back (no state passed): verify catches it.
        model.weight.data = torch.full((4,), 5.0, device=device)
        out = runner(model, (x,), verify=True)
        assert torch.equal(out, model(x))
        [reason] = runner.stats.eager
        assert reason.startswith("replay not exact (max abs diff 3")
        assert not runner.entries()


def test_the_capture_result_carries_the_eager_output(device, make_runner):
    model = Scaled(device)
    runner = make_runner()
    x = torch.arange(4.0, device=device)
    with torch.inference_mode():
        result = runner.capture(model, (x,))
        assert result.exact is True and result.max_abs_diff == 0.0
        assert torch.equal(result.output, model(x))


@pytest.mark.unit
def test_a_call_with_tensors_on_two_devices_runs_eager_with_the_reason():
    runner = GraphRunner(backend=RecordingBackend(), name="test")
    fn = lambda x, s: x  # noqa: E731
    x, s = torch.ones(4), torch.empty((), device="meta")
    with torch.inference_mode():
        result = runner.capture(fn, (x, s))
        assert result.status is CaptureStatus.SKIPPED
        assert result.reason == "tensors on several devices (cpu, meta): a graph would freeze the host values"
        runner(fn, (x, s))
        assert runner.stats.eager == {result.reason: 1}


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run on the H200 with scripts/gpu_suite.sh"
)
def test_a_cpu_scalar_in_a_cuda_call_is_never_frozen_into_a_graph():
    """On the H200 a graph captured with a CPU 2.0 replayed 2.0 when eager gave 5.0."""
    runner = GraphRunner(name="test")
    fn = lambda x, s: x * s  # noqa: E731
    x = torch.ones(4, device="cuda")
    with torch.inference_mode():
        assert runner.capture(fn, (x, torch.tensor(2.0))).status is CaptureStatus.SKIPPED
        out = runner(fn, (x, torch.tensor(5.0)))
        assert torch.equal(out, torch.full((4,), 5.0, device="cuda"))
        assert runner.stats.hits == 0


class Cancelled(Exception):
    pass


def test_a_cancel_during_capture_propagates_and_blocks_nothing(device, make_runner):
    model = Scaled(device)
    x = torch.ones(4, device=device)
    runner = make_runner()
    runner.abort_errors = (Cancelled,)
    calls = {"n": 0}

    def cancelled_once(x):
        calls["n"] += 1
        if calls["n"] == 3:  # inside the capture (after 2 warm-up runs)
            raise Cancelled()
        return model(x)

    with torch.inference_mode():
        with pytest.raises(Cancelled):
            runner.capture(cancelled_once, (x,))
        assert not runner.blocked() and not runner.entries()
        assert runner.capture(cancelled_once, (x,)).status is CaptureStatus.CAPTURED


def test_out_of_memory_during_capture_is_retried_at_the_next_warmup(device, make_runner):
    model = Scaled(device)
    x = torch.ones(4, device=device)
    runner = make_runner()
    calls = {"n": 0}

    def oom_once(x):
        calls["n"] += 1
        if calls["n"] == 3:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return model(x)

    with torch.inference_mode():
        failed = runner.capture(oom_once, (x,))
        assert failed.status is CaptureStatus.FAILED and "out of memory" in failed.reason
        assert torch.equal(failed.output, model(x))
        assert runner.capture(oom_once, (x,)).status is CaptureStatus.SKIPPED  # until the next warm-up
        runner.begin_warmup()
        assert runner.capture(oom_once, (x,)).status is CaptureStatus.CAPTURED


def test_a_value_frozen_at_capture_is_caught_by_the_proof(device, make_runner):
    """A forward that reads its input's value outside the graph (here through numpy, which no
    graph records; on CUDA such a host read cannot be captured at all) would replay the capture's
    value forever. The capture runs on shifted inputs, so the proof on the live values sees it:
    never served, every call eager and right."""

    def host_round_trip(x):
        frozen = torch.from_numpy(x.detach().cpu().numpy() * 2).to(x.device)
        return x + frozen

    runner = make_runner()
    with torch.inference_mode():
        x = torch.arange(4.0, device=device)
        result = runner.capture(host_round_trip, (x,))
        assert not result.ok and result.status in (CaptureStatus.NOT_EXACT, CaptureStatus.FAILED), result
        assert torch.equal(result.output, x * 3)
        y = torch.full((4,), 7.0, device=device)
        assert torch.equal(runner(host_round_trip, (y,)), y * 3)
        assert runner.stats.hits == 0 and not runner.entries()
