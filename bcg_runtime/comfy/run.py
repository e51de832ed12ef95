"""Run: one sampling run of a BCG model, made by the SAMPLER_SAMPLE hook and dropped when it ends.

A run holds what is true for its DiT calls only: its thread, model patcher and ``model_options``,
its steps and the calls seen per signature, whether it is a warm-up's, and the model's
fingerprint, taken at the first call that needs it (one with an entry to check, or one to capture)
and again when a cheap token says the model's modules changed since. It is the runner's
:class:`~bcg_runtime.core.capture.StateBinding` for the captures it makes: the storages its
fingerprint binds, the state a proven graph is bound to, and the watched view of a call's options.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections import Counter
from typing import Any

from . import fingerprint, module_token
from .options import watched_call

log = logging.getLogger(__name__)

#: Call signatures a run keeps the key of; a run meeting more keys the rest in full.
KEYED_KEPT = 256


class RunKind(enum.Enum):
    SAMPLING = "sampling"
    #: BCG Warmup Capture's placeholder sampling: every call captures, none replays.
    WARMUP = "warm-up"


class Run:
    """One sampling run (module docstring). ``checked``: whether the run's calls are checked
    against the model's fingerprint at all (False where BCG is off for the whole run: its calls
    run eager without a walk of the model)."""

    def __init__(
        self,
        model_patcher: Any,
        kind: RunKind,
        steps: int | None,
        model_options: dict | None,
        scratch: tuple[str, ...],
        compiled: str | None,
        checked: bool,
    ):
        self.patcher = model_patcher
        self.kind = kind
        self.steps = steps
        self.options = model_options if model_options is not None else model_patcher.model_options
        self.scratch = scratch
        #: The run's compile refusal while a torch.compile'd forward serves its DiT calls, else None.
        self.compiled = compiled
        self.checked = checked
        self.thread = threading.get_ident()
        #: DiT calls seen per signature label (the capture gate's count-down).
        self.seen: Counter = Counter()
        #: Per call signature (``decision``), the key and dispatch it was given at its first call.
        self.keyed: dict = {}
        #: DiT calls the DIFFUSION_MODEL hook ran for in Python (the APPLY_MODEL hook counts the rest).
        self.hook_calls = 0
        #: What the run's summary says of the foreign attention overrides its calls ran through.
        self.notes: set[str] = set()
        #: The fingerprint (None until a call needs it) and the module dictionaries its token watches.
        self.state: fingerprint.Fingerprint | None = None
        self._dicts = module_token.module_dicts(None)
        self._token: tuple = ()

    def remember(self, signature: Any, keyed: Any) -> None:
        """Keep a call signature's key for the rest of the run (up to :data:`KEYED_KEPT` of them)."""
        if len(self.keyed) < KEYED_KEPT:
            self.keyed[signature] = keyed

    @property
    def warming(self) -> bool:
        return self.kind is RunKind.WARMUP

    def fingerprint(self) -> tuple[fingerprint.Fingerprint, bool]:
        """The run's fingerprint, and whether this was its first take (the session then drops the
        graphs bound to another). Taken again when the modules' token moved since (a node that
        hooks or overrides a module in the middle of a run)."""
        if self.state is None:
            self._take()
            return self.state, True
        if module_token.modules_token(self._dicts) != self._token:
            self._take()
        return self.state, False

    def _now(self) -> fingerprint.Fingerprint:
        """The model's fingerprint as it is now."""
        return fingerprint.take(self.patcher, self.options, self.scratch)

    def _take(self) -> None:
        self.state = self._now()
        self._dicts = module_token.module_dicts(self.patcher.model.diffusion_model)
        self._token = module_token.modules_token(self._dicts)

    # ------------------------------------------------------------- StateBinding
    def bound_storages(self) -> set[int]:
        """What the run's fingerprint binds by address (the weights, the forward's scratch)."""
        return fingerprint.bound_storages(self.patcher, self.scratch)

    def after_capture(self, state: Any) -> Any:
        """``state``, or the fingerprint taken again where a process setting that picks kernels
        changed during the capture. torch settles its SDPA backend order at a process's first
        attention call (cuDNN's attention first on Hopper, unless that call ran inside ComfyUI's own
        ``set_priority``): where that call is a capture's warm-up run, the capture and its proof ran
        under the settled order while ``state`` holds the order before it, and binding the graph to
        ``state`` would drop it at the next run. Graphs captured earlier in the run, under the old
        settings, are dropped at their next call as for any change of the fingerprint."""
        if not isinstance(state, fingerprint.Fingerprint) or not fingerprint.process_settings_changed(state):
            return state
        now = self._now()
        log.info("[BCG] %s during a capture: the graph is bound to the settings it was captured and proven under",
                 now.change_from(state))  # fmt: skip
        if self.state is state:
            self.state = now
        return now

    def watch(self, kwargs: dict) -> dict:
        """The call's keyword arguments with ``transformer_options`` watched (:func:`.options.watched_call`)."""
        return watched_call(kwargs)
