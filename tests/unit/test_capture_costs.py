"""The measured costs a first-call capture is weighed with (GraphRunner, capture_first_call)."""

import pytest

from bcg_runtime.core.stats import CaptureCosts, ProofTimes

pytestmark = pytest.mark.unit


def test_capture_costs_are_medians_of_a_recent_window():
    costs = CaptureCosts()
    assert costs.repays(0), "nothing measured: capture (and measure)"
    costs.record(5.0, ProofTimes(eager=0.5, host=0.5, replay=0.0))  # one outlier
    for _ in range(4):
        costs.record(0.09, ProofTimes(eager=0.05, host=0.05, replay=0.01))
    assert abs(costs.overhead_s - 0.10) < 1e-9 and abs(costs.saving_s - 0.04) < 1e-9
    assert not costs.repays(2) and costs.repays(3)
    for _ in range(CaptureCosts.WINDOW):
        costs.record(0.19, ProofTimes(eager=0.05, host=0.05, replay=0.01))
    assert costs.samples == CaptureCosts.WINDOW and abs(costs.overhead_s - 0.20) < 1e-9


def test_a_device_bound_call_saves_only_the_host_time_past_the_device():
    """Timed alone, a device-bound eager call (20 ms of host work queueing 41 ms of kernels) takes
    55 ms and its replay 41: eager minus replay would credit 14 ms a call, but in a run the host
    queues the next call while the device works, so eager already takes the device's 41 ms. The
    saving is the host time past the replay's: none here, and no capture ever repays."""
    device_bound = CaptureCosts()
    device_bound.record(0.3, ProofTimes(eager=0.055, host=0.020, replay=0.041))
    assert device_bound.saving_s == 0.0 and not device_bound.repays(10**6)
    host_bound = CaptureCosts()  # 60 ms of host work for 30 ms of kernels: a replay saves the 29 ms past 31
    host_bound.record(0.3, ProofTimes(eager=0.061, host=0.060, replay=0.031))
    assert abs(host_bound.saving_s - 0.029) < 1e-9
    assert not host_bound.repays(11) and host_bound.repays(12)  # 11 x 29 < 300 + 31 < 12 x 29


def test_a_first_capture_gives_its_saving_and_keeps_its_cost_out():
    """A device's first capture carries lazy initialisation: its saving counts, its cost does not.
    With a saving and no cost known, any call that saves something repays; one that saves
    nothing never does."""
    saves = CaptureCosts()
    saves.record(None, ProofTimes(eager=0.061, host=0.060, replay=0.031))
    assert saves.samples == 1 and saves.overhead_s == 0.0 and saves.repays(1) and not saves.repays(0)
    saves_nothing = CaptureCosts()
    saves_nothing.record(None, ProofTimes(eager=0.055, host=0.020, replay=0.041))
    assert not saves_nothing.repays(10**6)
