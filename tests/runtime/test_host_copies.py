"""Host-to-device copies staged through recorded buffers (bcg_runtime.core.host_copies).

The interception and the record/replay bookkeeping run on the CPU with the ``meta`` device as the
stand-in target (no pinned memory there); the capture itself runs on real CUDA graphs, where a
pageable copy is what capture refuses."""

import pytest
import torch

from bcg_runtime.core import CaptureOptions, CaptureStatus
from bcg_runtime.core.host_copies import HostCopyMismatch, HostCopyStaging


def host_constants(x: torch.Tensor) -> torch.Tensor:
    """The spellings seen in ComfyUI forwards: Wan's ``arange(...).to(tensor)``, LTX-Video's
    ``torch.tensor(list, device=...)``, a host grid ``.to(device=...)`` and a ``copy_``."""
    freqs = torch.pow(10000, -torch.arange(4).to(x).div(4))
    scale = torch.tensor([8.0, 32.0, 32.0], device=x.device, dtype=x.dtype)
    grid = torch.linspace(0, 1, 5, dtype=torch.float64).to(device=x.device, dtype=x.dtype)
    ones = torch.empty(3, device=x.device, dtype=x.dtype)
    ones.copy_(torch.ones(1, dtype=torch.int64))  # converts and broadcasts
    ones[-1] = 2.0  # a Python number into a device tensor
    grid = grid + torch.zeros(5).type_as(x)
    return freqs, scale, grid, ones


@pytest.mark.unit
def test_copies_to_the_target_are_staged_in_call_order_and_others_pass():
    staging = HostCopyStaging("meta", pin=False)
    x = torch.empty(2, device="meta")
    with staging.recording():
        outs = host_constants(x)
        host = torch.arange(3).to(torch.float32)  # host to host: not a copy to the device
        meta = x.to(torch.float16)  # device to device: not staged
    assert all(o.device.type == "meta" for o in outs) and host.device.type == "cpu" and meta.device.type == "meta"
    assert [tuple(b.shape) for b in staging.buffers] == [(4,), (3,), (5,), (3,), (), (5,)]
    assert [b.dtype for b in staging.buffers] == [torch.float32] * 6  # converted on the host
    assert torch.equal(staging.buffers[0], torch.arange(4, dtype=torch.float32))
    assert torch.equal(staging.buffers[1], torch.tensor([8.0, 32.0, 32.0]))
    assert torch.equal(staging.buffers[3], torch.ones(3)) and staging.buffers[4].item() == 2.0

    recorded = list(staging.buffers)
    with staging.replaying():
        host_constants(x)
    assert all(a is b for a, b in zip(staging.buffers, recorded)), "replay reuses the recorded buffers"


@pytest.mark.unit
def test_a_copy_asked_for_by_name_or_position_is_staged():
    """ComfyUI's ``cast_to`` spells ``.to(device=..., dtype=..., copy=...)``, which PyTorch's own
    argument parser refuses; a staged copy is a new tensor anyway."""
    staging = HostCopyStaging("meta", pin=False)
    x = torch.empty(2, device="meta")
    with staging.recording():
        named = torch.ones(3).to(device=x.device, dtype=torch.float16, non_blocking=False, copy=True)
        positional = torch.ones(2).to(x.device, torch.float16, False, True)
        host = torch.ones(2).to(dtype=torch.float16, copy=True)  # host to host: passes unchanged
    assert named.device.type == positional.device.type == "meta" and named.dtype == torch.float16
    assert host.device.type == "cpu" and host.dtype == torch.float16
    assert [tuple(b.shape) for b in staging.buffers] == [(3,), (2,)]


@pytest.mark.unit
def test_type_as_and_a_number_written_into_a_device_tensor_are_staged():
    """Wan Animate's ``torch.zeros(B, 1, H, C).type_as(x)`` and WanDancer's ``positions[-1] = n``:
    the number becomes a 0-dim buffer in the target's dtype, converted as PyTorch converts it.
    Where PyTorch copies nothing (a number filled into a slice, a boolean mask's ``masked_fill_``,
    which needs the number on the host) the write passes unchanged."""
    staging = HostCopyStaging("meta", pin=False)
    x = torch.empty(2, 3, device="meta", dtype=torch.bfloat16)
    with staging.recording():
        pad = torch.zeros(1, 3).type_as(x)
        positions = torch.empty(4, device="meta", dtype=torch.bfloat16)
        positions[-1] = 1 / 3
        positions[1] = 7
        positions[:2] = 5  # filled into a slice: no copy
        positions[positions > 0] = 3  # a boolean mask: masked_fill_, no copy
        host = torch.zeros(2)
        host[0] = 1.5  # host target: passes unchanged
        same = torch.zeros(2).type_as(torch.ones(1, dtype=torch.float16))  # host to host
    assert pad.device.type == "meta" and pad.dtype == torch.bfloat16
    assert host[0].item() == 1.5 and same.device.type == "cpu" and same.dtype == torch.float16
    assert [(tuple(b.shape), b.dtype) for b in staging.buffers] == [
        ((1, 3), torch.bfloat16),
        ((), torch.bfloat16),
        ((), torch.bfloat16),
    ]
    assert staging.buffers[1].item() == torch.tensor(1 / 3, dtype=torch.bfloat16).item()
    assert staging.buffers[2].item() == 7


@pytest.mark.unit
def test_a_capture_with_other_copies_than_its_warmup_raises():
    staging = HostCopyStaging("meta", pin=False)
    x = torch.empty(2, device="meta")
    with staging.recording():
        torch.arange(4).to(x)
    with pytest.raises(HostCopyMismatch, match=r"\(5,\).*in the capture.*\(4,\)"):
        with staging.replaying():
            torch.arange(5).to(x)
    with pytest.raises(HostCopyMismatch, match="more host-to-device copies"):
        with staging.replaying():
            torch.arange(4).to(x)
            torch.arange(4).to(x)
    with pytest.raises(HostCopyMismatch, match="made 0 host-to-device copies, its warm-up run 1"):
        with staging.replaying():
            pass


class HostConstantModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        freqs, scale, grid, ones = host_constants(x)
        return self.proj(x * freqs) * scale.sum() + grid.sum() + ones.sum()


def test_a_forward_with_host_constants_captures_only_when_staged(device, make_runner):
    model = HostConstantModel().to(device)
    x = torch.randn(3, 4, device=device)
    with torch.no_grad():
        staged = make_runner()
        staged.options = CaptureOptions(stage_host_copies=True)
        result = staged.capture(model, (x,))
        assert result.status is CaptureStatus.CAPTURED and result.exact, result
        for seed in (1, 2):
            live = torch.randn(3, 4, device=device, generator=torch.Generator(device).manual_seed(seed))
            assert torch.equal(staged(model, (live,)), model(live))
        assert staged.stats.hits == 2

        plain = make_runner().capture(model, (x,))
    if device.type == "cuda":
        assert plain.status is CaptureStatus.FAILED and "capture" in plain.reason, plain
    else:  # the CPU stand-in has no capture to refuse a copy
        assert plain.status is CaptureStatus.CAPTURED


@pytest.mark.gpu
def test_a_copied_device_value_still_fails_the_capture(device, make_runner):
    """Staging covers host-built values only: one read back from the device is a sync, and the
    capture refuses it as before, so nothing value-dependent can be frozen into a buffer."""
    if device.type != "cuda":
        pytest.skip("the CPU stand-in does not refuse syncs; the rule is CUDA's")
    runner = make_runner()
    runner.options = CaptureOptions(stage_host_copies=True)
    fn = lambda x: x * torch.tensor([x.sum().item()], device=x.device)  # noqa: E731
    result = runner.capture(fn, (torch.randn(4, device=device),))
    assert result.status is CaptureStatus.FAILED, result
    assert torch.equal(result.output.isfinite(), torch.ones(4, dtype=torch.bool, device=device))
