"""What the pack says when ComfyUI loads it: one line when BCG cannot run in this process.

Under ``--cpu``, without a CUDA GPU, or with the cudaMallocAsync allocator no model can get graphs
(:func:`.guards.process_refusal`). The user learns it once, at start-up, with the reason; after
that a model's BCG session carries the same reason to its badge and run summary, and nothing
repeats it in the log.
"""

from __future__ import annotations

import logging

from . import guards

log = logging.getLogger(__name__)
_reported = False


def report_process() -> str | None:
    """Log why BCG cannot run in this process (once per process); returns that reason, or None
    when BCG can run (then nothing is logged)."""
    global _reported
    reason = guards.process_refusal()
    if reason and not _reported:
        _reported = True
        log.warning("[BCG] BCG cannot run in this ComfyUI process: %s", reason)
    return reason
