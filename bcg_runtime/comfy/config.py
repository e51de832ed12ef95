"""What the user chose on BCG Apply: the mode, when shapes are captured, the memory budget and
verify, as enums and one frozen config (a leaf: the model adapters may import it)."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Any


class Mode(enum.Enum):
    """How a forward is cut into graphs."""

    #: 'full' where the model's adapter says the whole forward is graph-safe, else 'breakable'.
    AUTO = "auto"
    #: Attention runs eagerly between captured segments (one break per attention call). Every
    #: tensor crossing a break is held for the graph's life, so graph memory grows with the breaks.
    BREAKABLE = "breakable"
    #: The whole forward is one graph; only for models whose forward is fully graph-safe.
    FULL = "full"
    #: One graph over torch.compile'd repeated blocks (``fast.py``): faster kernels, not bit-exact
    #: to eager (each graph is still proven equal to the compiled forward it captured).
    FAST = "fast"


class CapturePolicy(enum.Enum):
    """When a signature gets its graph."""

    #: The first call of a signature is captured, proven bit-equal against its eager run (whose
    #: output it returns) and replays from the next call on; past the memory budget the least
    #: recently used graphs are evicted. No shape list to keep in sync with the workflow.
    ON_FIRST_CALL = "on first call"
    #: Only BCG Warmup Capture captures; unwarmed shapes run eager ("not captured").
    WARMUP_ONLY = "warm-up only"


#: Share of the free VRAM (after the model is loaded) that graphs may hold when no budget is set.
AUTO_BUDGET_SHARE = 0.5


@dataclass(frozen=True)
class BCGConfig:
    #: The node's default, ``auto``; a session takes the config :meth:`for_adapter` resolved.
    mode: Mode = Mode.AUTO
    #: Graph memory (pool plus static buffers) above which no further shape is captured (warm-up
    #: only) or least recently used graphs are evicted (on first call); 0 = automatic: a share of
    #: the free VRAM once the model is loaded (:data:`AUTO_BUDGET_SHARE`; no limit off CUDA).
    memory_budget_mb: int = 0
    capture: CapturePolicy = CapturePolicy.ON_FIRST_CALL
    #: Compare replay with eager on the first replayed call of each shape; a difference drops it.
    verify: bool = False
    #: Whether ``mode`` was resolved from ``auto`` (:meth:`for_adapter`): the status says
    #: ``auto (full)``, so the user sees the choice they made and what it became.
    from_auto: bool = False

    def for_adapter(self, adapter: Any) -> "BCGConfig":
        """This config with ``auto`` resolved for the model's adapter: ``full`` where its whole
        forward is graph-safe, else ``breakable`` (also for an unsupported model, ``adapter`` None)."""
        if self.mode is not Mode.AUTO:
            return self
        mode = Mode.FULL if adapter is not None and adapter.full_graph_safe else Mode.BREAKABLE
        return dataclasses.replace(self, mode=mode, from_auto=True)
