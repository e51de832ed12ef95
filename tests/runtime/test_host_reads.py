"""HostReads: a forward's device-to-host reads, recorded on the live call and handed back in order to
its warm-up runs and capture (bcg_runtime/core/host_reads.py). Runs on the CPU stand-in, which
refuses a read inside a capture as CUDA does, and on CUDA."""

import pytest
import torch

from bcg_runtime.core import CaptureOptions, CaptureStatus
from bcg_runtime.core.host_reads import HostReadMismatch, HostReads


def test_replaying_returns_the_recorded_values_in_order_without_reading():
    reads = HostReads("cpu")
    sigma, rows = torch.tensor([0.25]), torch.tensor([3, 1])
    with reads.recording():
        recorded = (float(1.0 - sigma), rows.tolist(), int(rows[0]), bool(sigma > 0), sigma.item())
    assert recorded == (0.75, [3, 1], 3, True, 0.25)
    with reads.replaying():  # other values on the device: the recorded ones come back
        other, other_rows = torch.tensor([0.5]), torch.tensor([7, 7])
        replayed = (float(1.0 - other), other_rows.tolist(), int(other_rows[0]), bool(other > 0), other.item())
    assert replayed == recorded
    replayed[1].append(9)  # a list handed back is the caller's own
    with reads.replaying():
        again = (float(sigma), rows.tolist(), int(rows[0]), bool(sigma), sigma.item())
    assert again == recorded


def test_reads_of_other_devices_and_plain_numbers_pass_through():
    reads = HostReads("meta")
    with reads.recording():
        assert float(torch.tensor(2.0)) == 2.0 and int(3.7) == 3
    assert reads.values == []


def test_a_run_whose_reads_differ_from_the_recording_is_a_mismatch():
    reads = HostReads("cpu")
    x = torch.ones(2)
    with reads.recording():
        float(x[0])
    with pytest.raises(HostReadMismatch, match=r"host read 1 is tolist of \(2,\) in this run, __float__ of \(\)"):
        with reads.replaying():
            x.tolist()
    with pytest.raises(HostReadMismatch, match="more values on the host than the recorded run"):
        with reads.replaying():
            float(x[0]), float(x[1])
    with pytest.raises(HostReadMismatch, match="read 0 values on the host, the recorded run 1"):
        with reads.replaying():
            pass


class StepModel(torch.nn.Module):
    """Reads its sigma on the host and steers with it, as MiniMax H3 does: the Python number picks a
    row of the embedding table and scales the output."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.table = torch.nn.Parameter(torch.randn(11, 4))

    def forward(self, x, sigma):
        t = float(1.0 - sigma.flatten()[0])
        row = int(round(t * 10))
        return self.proj(x + self.table[row]) * t


def test_a_forward_that_reads_its_step_captures_per_step_and_replays_exactly(device, make_runner):
    model = StepModel().to(device)
    x = torch.randn(3, 4, device=device)
    steps = [torch.tensor([s], device=device) for s in (0.9, 0.4)]
    with torch.no_grad():
        runner = make_runner()
        runner.options = CaptureOptions(replay_host_reads=True)
        for sigma in steps:  # the caller's contract: the value read is in the key
            result = runner.capture(model, (x, sigma), key_extra=("sigma", float(sigma)))
            assert result.status is CaptureStatus.CAPTURED and result.exact, result
        for seed in (1, 2):
            live = torch.randn(3, 4, device=device, generator=torch.Generator(device).manual_seed(seed))
            for sigma in steps:
                served = runner(model, (live, sigma), key_extra=("sigma", float(sigma)))
                assert torch.equal(served, model(live, sigma))
        assert runner.stats.hits == 4 and runner.stats.captures == 2

        plain = make_runner().capture(model, (x, steps[0]))
    assert plain.status is CaptureStatus.FAILED, plain  # the read is a sync: capture refuses it
    assert torch.equal(plain.output, model(x, steps[0]))  # and the call ran eager
    # the failed capture left the device's random generator usable (a sampler's noise after it)
    assert torch.randn(2, device=device).shape == (2,)
