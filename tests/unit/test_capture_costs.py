"""The measured costs a first-call capture is weighed with (GraphRunner, capture_first_call)."""

import pytest

import torch

from bcg_runtime.core.stats import CaptureCosts, ProofTimes

pytestmark = pytest.mark.unit
SIZE = 17  # one size class: a 512² latent (1 x 16 x 64 x 64)


def test_capture_costs_are_medians_of_a_recent_window():
    costs = CaptureCosts()
    assert costs.repays(0, SIZE), "nothing measured: capture (and measure)"
    costs.record(5.0, ProofTimes(eager=0.5, host=0.5, replay=0.0), SIZE)  # one outlier
    for _ in range(CaptureCosts.SETTLED - 1):
        costs.record(0.09, ProofTimes(eager=0.05, host=0.05, replay=0.01), SIZE)
    assert abs(costs.overhead_s - 0.10) < 1e-9 and abs(costs.saving_s - 0.04) < 1e-9
    assert not costs.repays(2, SIZE) and costs.repays(3, SIZE)
    for _ in range(CaptureCosts.WINDOW):
        costs.record(0.19, ProofTimes(eager=0.05, host=0.05, replay=0.01), SIZE)
    assert costs.samples == CaptureCosts.WINDOW and abs(costs.overhead_s - 0.20) < 1e-9


def test_a_few_low_early_proofs_do_not_stop_the_captures_that_correct_them():
    """The Z-Image batch on an H100 (docs/benchmarks.md): the first three proofs of the 512² size
    class saved 35.9, 3.2 and 1.5 ms a call, later ones 17-32. Only a capture adds a proof, so
    judged by the median of those three (3.2 ms) a shape seen in two runs (14 calls to come) stayed
    eager against a 240 ms capture, and it took ten runs of a shape to capture it. Until a size has
    SETTLED proofs its largest saving judges it; from then on the median."""
    costs = CaptureCosts()
    for saving in (0.0359, 0.0032, 0.0015):
        costs.record(0.2, ProofTimes(eager=0.06, host=0.04 + saving, replay=0.04), SIZE)
    assert costs.repays(14, SIZE) and abs(costs.saving_of(SIZE) - 0.0359) < 1e-9
    for _ in range(CaptureCosts.SETTLED - 3):
        costs.record(0.2, ProofTimes(eager=0.06, host=0.058, replay=0.04), SIZE)
    assert abs(costs.saving_of(SIZE) - 0.018) < 1e-9
    assert costs.repays(14, SIZE) and not costs.repays(7, SIZE)  # 14 x 18 > 240 > 7 x 18


def test_a_device_bound_call_saves_only_the_host_time_past_the_device():
    """Timed alone, a device-bound eager call (20 ms of host work queueing 41 ms of kernels) takes
    55 ms and its replay 41: eager minus replay would credit 14 ms a call, but in a run the host
    queues the next call while the device works, so eager already takes the device's 41 ms. The
    saving is the host time past the replay's: none here, and no capture ever repays."""
    device_bound = CaptureCosts()
    device_bound.record(0.3, ProofTimes(eager=0.055, host=0.020, replay=0.041), SIZE)
    assert device_bound.saving_s == 0.0 and not device_bound.repays(10**6, SIZE)
    host_bound = CaptureCosts()  # 60 ms of host work for 30 ms of kernels: a replay saves the 29 ms past 31
    host_bound.record(0.3, ProofTimes(eager=0.061, host=0.060, replay=0.031), SIZE)
    assert abs(host_bound.saving_s - 0.029) < 1e-9
    assert not host_bound.repays(11, SIZE) and host_bound.repays(12, SIZE)  # 11 x 29 < 300 + 31 < 12 x 29


def test_a_first_capture_gives_its_saving_and_keeps_its_cost_out():
    """A device's first capture carries its first use: its saving counts, its cost does not.
    With a saving and no cost known, any call that saves something repays; one that saves
    nothing never does."""
    saves = CaptureCosts()
    saves.record(None, ProofTimes(eager=0.061, host=0.060, replay=0.031), SIZE)
    assert saves.samples == 1 and saves.overhead_s == 0.0 and saves.repays(1, SIZE) and not saves.repays(0, SIZE)
    saves_nothing = CaptureCosts()
    saves_nothing.record(None, ProofTimes(eager=0.055, host=0.020, replay=0.041), SIZE)
    assert not saves_nothing.repays(10**6, SIZE)


def test_a_size_is_judged_by_its_own_proofs():
    """One machine runs a model device-bound at 1024² and host-bound at 512²: a 1024² proof that
    saved nothing must not keep every 512² shape eager for the process's life. A size with no
    proof of its own captures (and so measures); each is weighed by its own savings after."""
    from bcg_runtime.core.stats import size_class

    large, small = torch.empty(1, 16, 128, 128), torch.empty(1, 16, 64, 64)
    assert size_class(large) != size_class(small) == size_class(torch.empty(1, 16, 64, 96)) == 17
    assert size_class(torch.empty(2, 16, 64, 64)) == 18 and size_class(None) == 0
    costs = CaptureCosts()
    costs.record(0.3, ProofTimes(eager=0.055, host=0.020, replay=0.041), size_class(large))
    assert not costs.repays(10**6, size_class(large))
    assert costs.repays(1, size_class(small)) and costs.saving_of(size_class(small)) is None
    costs.record(0.3, ProofTimes(eager=0.061, host=0.060, replay=0.031), size_class(small))
    assert not costs.repays(11, size_class(small)) and costs.repays(12, size_class(small))
    assert not costs.repays(10**6, size_class(large)) and costs.samples == 2


def _replay_batch_through_the_gate() -> int:
    """Host B's Z-Image batch (docs/benchmarks.md, 2026-12-07) through the real CaptureGate: the
    jobs of ``bench.batch`` (100 prompts of 10-200 tokens, 3 sizes rotating, 8 steps, caption
    buckets of 32), each capture adding the next of that run's proof savings (35.9, 3.2, 1.5 ms,
    then 17-32) against a 240 ms capture. Returns the calls replayed."""
    from bcg_runtime.core.dispatch import Call, CallKey, CaptureGate, Gate
    from bcg_runtime.core.stats import RunnerStats
    from bench.batch import prompt_lengths

    savings = iter([0.0359, 0.0032, 0.0015] + [0.0182, 0.0306, 0.0175, 0.0309, 0.0200, 0.0168, 0.0317] * 10)
    stats = RunnerStats()
    gate = CaptureGate("zimage", stats)
    sizes = [(512, 512), (768, 512), (512, 768)]
    captured, replayed = set(), 0
    for job, tokens in enumerate(prompt_lengths(100, seed=0)):
        width, height = sizes[job % 3]
        latent = torch.empty(1, 16, height // 8, width // 8, device="meta")
        call = Call(CallKey((width, height, -(-tokens // 32)), (), ()), [latent], f"{width}x{height}", None)
        for step in range(8):
            if call.key in captured:
                replayed += 1
            elif not gate.put_off(call, Gate(on_first_call=True, calls_left=7 - step)):
                capture_s = None if not captured else 0.2  # a device's first capture: its saving only
                stats.costs.record(capture_s, ProofTimes(eager=0.06, host=0.04 + next(savings), replay=0.04), call.size)
                captured.add(call.key)
    return replayed


def test_a_batch_of_varied_prompts_is_not_held_eager_by_its_first_proofs(monkeypatch):
    """Judged by the median from the first proof (SETTLED 1: the rule before), the batch replays
    fewer than half of its calls, as the run did (366 of 800); judged by the largest saving until
    8 proofs, most of them."""
    assert _replay_batch_through_the_gate() > 650
    monkeypatch.setattr(CaptureCosts, "SETTLED", 1)
    assert _replay_batch_through_the_gate() < 400
