"""The bench's SM clock and power sampling (``bench.gpu_clocks``): nvidia-smi's CSV read into
means, a GPU picked by its UUID, and nothing measured (never an error) without nvidia-smi."""

import os
import stat
import time

import pytest

from bench.gpu_clocks import ClockSampler, parse_samples

pytestmark = pytest.mark.unit


def test_the_gpu_s_samples_are_averaged_and_unreadable_lines_skipped():
    text = "GPU-a1, 1980, 600.5\nGPU-b2, 900, 100\nGPU-a1, [N/A], [N/A]\n\nGPU-a1, 1780, 700.5\nnot a sample\n"
    for uuid in ("a1", "GPU-a1"):  # torch's spelling and nvidia-smi's
        reading = parse_samples(text, uuid)
        assert (reading.sm_clock_mhz, reading.power_w, reading.samples) == (1880.0, 650.5, 2)
    assert parse_samples(text, None).samples == 3  # every GPU's readable lines
    assert parse_samples(text, "c3") is None and parse_samples("GPU-a1, [N/A], [N/A]\n", "a1") is None


def fake_nvidia_smi(folder, lines):
    """An ``nvidia-smi`` that prints ``lines``, then records its arguments (so once they are there,
    the lines are in the pipe) and keeps sampling until stopped."""
    exe = folder / "nvidia-smi"
    printed = "".join(f"echo '{line}'\n" for line in lines)
    exe.write_text("#!/bin/sh\n" + printed + 'echo "$@" > "$(dirname "$0")/args"\nexec sleep 30\n')
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return folder / "args"


def test_the_sampler_reads_the_gpu_it_is_given_until_the_block_ends(tmp_path, monkeypatch):
    args = fake_nvidia_smi(tmp_path, ["GPU-8c1f, 1500, 400", "GPU-other, 100, 50", "GPU-8c1f, 1700, 600"])
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with ClockSampler("8c1f") as sampler:
        assert sampler._lines, (
            "the block began before nvidia-smi's first sample (its start would overlap the timed runs)"
        )
        for _ in range(1000):  # until the fake has printed (it starts asynchronously)
            if args.exists() and args.read_text():
                break
            time.sleep(0.01)
    assert (sampler.reading.sm_clock_mhz, sampler.reading.power_w, sampler.reading.samples) == (1600.0, 500.0, 2)
    called = args.read_text().split()
    assert "--query-gpu=uuid,clocks.sm,power.draw" in called and "--loop-ms=100" in called, called


def test_without_nvidia_smi_nothing_is_measured_and_nothing_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no nvidia-smi
    with ClockSampler("GPU-x") as sampler:
        pass
    assert sampler.reading is None
