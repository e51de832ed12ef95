"""The measured costs a first-call capture is weighed with (GraphRunner, capture_first_call)."""

import pytest

from bcg_runtime.core.stats import CaptureCosts

pytestmark = pytest.mark.unit


def test_capture_costs_are_medians_of_a_recent_window():
    costs = CaptureCosts()
    assert costs.repays(0), "nothing measured: capture (and measure)"
    costs.record(capture_s=5.0, eager_s=0.5, replay_s=0.0)  # one outlier
    for _ in range(4):
        costs.record(capture_s=0.09, eager_s=0.05, replay_s=0.01)
    assert abs(costs.overhead_s - 0.10) < 1e-9 and abs(costs.saving_s - 0.04) < 1e-9
    assert not costs.repays(2) and costs.repays(3)
    for _ in range(CaptureCosts.WINDOW):
        costs.record(capture_s=0.19, eager_s=0.05, replay_s=0.01)
    assert costs.samples == CaptureCosts.WINDOW and abs(costs.overhead_s - 0.20) < 1e-9
