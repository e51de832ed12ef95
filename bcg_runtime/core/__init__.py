"""Breakable CUDA graph runtime core: plain torch, no ComfyUI import.

- :mod:`.breaks`   the break-point API used from code under capture
- :mod:`.graph`    BreakableGraph: segments and eager breaks of one call
- :mod:`.runner`   GraphRunner: lookup / resolve / execute a call; capture on request
- :mod:`.dispatch` a call's key, the runner's decision as a value, the capture gate
- :mod:`.entries`  proven entries, blocks, pools and their eviction
- :mod:`.capture`  capture one call and prove its replay bit-equal to eager
- :mod:`.trees`    argument/output trees: keys, static buffers, clones, bridge copies
- :mod:`.backends` CUDA graphs; :mod:`.cpu_graph` the CPU stand-in used by the unit tests
- :mod:`.stats`    counters a UI can show
- :mod:`.reasons`  why a call ran eager, as a value (kind + text)
"""

from .breaks import breakable, graph_break, is_capturing
from .capture import EXACT, CaptureOptions, CaptureResult, CaptureStatus, CaptureStrategy
from .dispatch import Action, Decision, Dispatch, Gate, Pending
from .graph import BreakableGraph, BreakRecord, SegmentLimitExceeded
from .reasons import Reason, one_line
from .runner import GraphRunner, RunnerLimits
from .stats import RunnerStats, summarize_run

__all__ = [
    "Action",
    "CaptureOptions",
    "Dispatch",
    "Gate",
    "Pending",
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
