"""The GPU's SM clock and power draw while a benchmark row runs, sampled by ``nvidia-smi``.

Kernel times alone cannot say whether a mode's GEMMs got slower or the GPU did: a denser timeline
(fused kernels, no launch gaps) draws more power, and a GPU at its power limit lowers its clock,
so every kernel takes longer. The bench records both for each row's timed runs so the kernel
split can be read against them. Where ``nvidia-smi`` is missing (CPU machines, other vendors) the
sampler measures nothing and says so by returning None: it never fails a benchmark.
"""

from __future__ import annotations

import logging
import shutil
import signal
import subprocess
import threading
from dataclasses import dataclass

log = logging.getLogger(__name__)

#: Sampling period in milliseconds (``nvidia-smi --loop-ms``): a 20-step denoise of 1-5 s gives 10-50 samples.
PERIOD_MS = 100
#: The longest the timed runs wait for nvidia-smi's first sample.
START_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class ClockReading:
    """Means over the samples taken while the row ran."""

    sm_clock_mhz: float
    power_w: float
    samples: int


def parse_samples(text: str, device_uuid: str | None = None) -> ClockReading | None:
    """``nvidia-smi --query-gpu=uuid,clocks.sm,power.draw --format=csv,noheader,nounits`` output
    (one ``"GPU-8c1f..., 1980, 612.35"`` line per GPU and sample) -> the means of ``device_uuid``'s
    lines (every line for None); None without one readable line (a value such as ``[N/A]`` is
    skipped, not guessed). Torch spells a UUID without nvidia-smi's ``GPU-`` prefix: both match."""
    wanted = str(device_uuid).removeprefix("GPU-") if device_uuid else None
    clocks, powers = [], []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3 or (wanted and parts[0].removeprefix("GPU-") != wanted):
            continue
        try:
            clock, power = float(parts[1]), float(parts[2])
        except ValueError:
            continue
        clocks.append(clock)
        powers.append(power)
    if not clocks:
        return None
    return ClockReading(sum(clocks) / len(clocks), sum(powers) / len(powers), len(clocks))


class ClockSampler:
    """``with ClockSampler(device_uuid) as sampler: ...`` then ``sampler.reading`` (None where
    nothing could be sampled). ``device_uuid`` (``torch.cuda.get_device_properties(i).uuid``)
    picks the GPU the bench runs on out of every GPU nvidia-smi reports (matched by UUID, which
    holds under ``CUDA_VISIBLE_DEVICES`` where indices do not); None averages them all."""

    def __init__(self, device_uuid: str | None = None):
        self.device_uuid = device_uuid
        self.reading: ClockReading | None = None
        self._proc: subprocess.Popen | None = None
        self._lines: list[str] = []
        self._reader: threading.Thread | None = None
        self._started = threading.Event()

    def __enter__(self) -> "ClockSampler":
        exe = shutil.which("nvidia-smi")
        if exe is None:
            return self
        cmd = [exe, "--query-gpu=uuid,clocks.sm,power.draw", "--format=csv,noheader,nounits", f"--loop-ms={PERIOD_MS}"]
        # Into a pipe its output is block-buffered: a short row's samples could sit in the buffer
        # when it is stopped. Line buffering (stdbuf, glibc) and SIGINT, the stop its loop mode
        # expects (Ctrl-C), keep them.
        stdbuf = shutil.which("stdbuf")
        if stdbuf:
            cmd = [stdbuf, "-oL", *cmd]
        try:
            self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError as e:
            log.warning("[BCG] bench: nvidia-smi did not start (%s); no clock readings", e)
            return self
        # A thread drains the pipe as samples come (a long row would fill it and stall nvidia-smi).
        self._reader = threading.Thread(target=self._read, name="bcg-gpu-clocks", daemon=True)
        self._reader.start()
        # Its start (NVML initialisation, a few hundred ms of CPU) must not overlap the timed runs:
        # the block starts once the first sample is out, or nvidia-smi ended, or after a bound.
        self._started.wait(timeout=START_TIMEOUT_S)
        return self

    def _read(self) -> None:
        for line in self._proc.stdout:
            self._lines.append(line)
            self._started.set()
        self._started.set()  # ended without a sample

    def __exit__(self, *exc) -> None:
        if self._proc is None:
            return
        self._proc.send_signal(signal.SIGINT)
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(timeout=5)
        self.reading = parse_samples("".join(self._lines), self.device_uuid)
