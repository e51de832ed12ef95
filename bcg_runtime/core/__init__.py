"""Breakable CUDA graph runtime core: plain torch, no ComfyUI import.

- :mod:`.breaks`   the break-point API used from code under capture
- :mod:`.graph`    BreakableGraph: segments and eager breaks of one call
- :mod:`.runner`   GraphRunner: key, static buffers, replay, eager fallback with a reason
- :mod:`.trees`    argument/output trees: keys, static buffers, clones, bridge copies
- :mod:`.backends` CUDA graphs; :mod:`.cpu_graph` the CPU stand-in used by the unit tests
- :mod:`.stats`    counters a UI can show
- :mod:`.reasons`  why a call ran eager, as a value (kind + text)
"""

from .breaks import breakable, graph_break, is_capturing
from .graph import BreakableGraph, BreakRecord, SegmentLimitExceeded
from .reasons import Reason
from .runner import EXACT, CaptureResult, CaptureStatus, CaptureStrategy, Decision, GraphRunner, RunnerLimits, one_line
from .stats import RunnerStats, summarize_run

__all__ = [
    "BreakRecord",
    "BreakableGraph",
    "CaptureResult",
    "CaptureStatus",
    "CaptureStrategy",
    "Decision",
    "EXACT",
    "GraphRunner",
    "RunnerLimits",
    "Reason",
    "RunnerStats",
    "SegmentLimitExceeded",
    "breakable",
    "graph_break",
    "is_capturing",
    "one_line",
    "summarize_run",
]
