"""BCGSession: everything BCG keeps for one model, shared by every clone of its ModelPatcher: the
adapter, the config, the runner and its graphs, the capture gate's counts across runs, and the
run in progress (:class:`~.run.Run`).

ComfyUI deep-copies ``model_options`` when it clones a model, and list-copies wrappers. A session
holds CUDA graphs and must never be copied, so it (and every wrapper that points at it) returns
itself from ``__deepcopy__``. None of these objects has a ``.to`` method: ComfyUI calls ``.to`` on
any wrapper that has one after sampling.
"""

from __future__ import annotations

import logging
import uuid
import weakref
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..core import EXACT, CaptureOptions, CaptureStrategy, Gate, GraphRunner, RunnerLimits
from . import fingerprint, guards, report
from .attention_break import BreakingAttention
from .config import AUTO_BUDGET_SHARE, BCGConfig, CapturePolicy, Mode
from .models import ModelAdapter
from .run import Run, RunKind

log = logging.getLogger(__name__)

#: Every live session, for the HTTP status route and the UI (weak: a deleted model frees its graphs).
SESSIONS: "weakref.WeakValueDictionary[str, BCGSession]" = weakref.WeakValueDictionary()

_invalidations = 0


def invalidations() -> int:
    """How many times any session dropped its graphs because weights moved.

    The warm-up node returns this from ``fingerprint_inputs``: ComfyUI then re-runs a cached
    warm-up on the next prompt after an invalidation, and never otherwise.
    """
    return _invalidations


#: How many per-step labels :attr:`BCGSession.label_runs` keeps; past it the older half is dropped
#: (a dropped label's captures wait one more run, nothing else changes).
LABEL_RUNS_KEPT = 4096
#: Foreign attention overrides a session keeps a break for (a graph holds the break it was captured through).
FOREIGN_ATTENTION_KEPT = 8


def _interrupt_errors() -> tuple[type[BaseException], ...]:
    """ComfyUI's Cancel, which must end a capture without blocking its shape."""
    try:
        import comfy.model_management as mm
    except ImportError:  # the core is usable without ComfyUI (tests, scripts)
        return ()
    return (mm.InterruptProcessingException,)


@dataclass
class CaptureRecord:
    """One signature met during a warm-up: what happened and whether replay matched eager."""

    label: str
    status: str
    reason: str = ""
    segments: int = 0
    breaks: int = 0
    seconds: float = 0.0
    pool_mib: float = 0.0
    exact: bool | None = None
    max_abs_diff: float | None = None
    #: Mode fast: max abs difference of the captured (compiled) output from the plain forward,
    #: and that difference's L2 norm relative to the plain output's.
    eager_diff: float | None = None
    eager_relative: float | None = None


@dataclass
class BCGSession:
    adapter: ModelAdapter | None
    config: BCGConfig
    runner: GraphRunner = field(init=False)
    #: Mode breakable: BCG's attention break, installed on the model's transformer_options.
    attention: BreakingAttention | None = None
    #: Mode fast: the compiled twins of the DiT's repeated blocks (``fast.RegionalCompile``).
    fast: Any = None
    #: How this mode captures and accepts graphs (mode fast: ``fast.strategy()``).
    strategy: CaptureStrategy = EXACT
    #: Why graphs can never serve this model (no CUDA, unsupported family); None when they can.
    permanent_refusal: str | None = None
    #: Stage the forward's host-to-device copies through pinned buffers (the adapter asks, or the
    #: weights' own class copies host tensors in the forward: ``guards.plain_subclass_weights``).
    stage_host_copies: bool = False
    #: Set when graphs were dropped because what they read changed; cleared by the next warm-up.
    stale: str | None = None
    #: The fingerprint the live entries were captured under (the last run's).
    last_state: fingerprint.Fingerprint | None = None
    #: The sampling run in progress (the SAMPLER_SAMPLE hook's), None between runs.
    run: Run | None = None
    #: A list while BCG Warmup Capture runs: its runs capture instead of replaying.
    capture_log: list[CaptureRecord] | None = None
    #: Labels verified once (BCG Apply's verify).
    verified: set[str] = field(default_factory=set)
    #: Runs each label was met in (``keys_per_step`` families: see :meth:`gate`), at most
    #: :data:`LABEL_RUNS_KEPT` labels (a server sampling many schedules meets new ones forever).
    label_runs: Counter = field(default_factory=Counter)
    #: The most DiT calls of each of those labels one run made (cond and uncond: 2).
    label_calls: Counter = field(default_factory=Counter)
    #: What run summaries say besides their counts while the OUTER_SAMPLE hook holds it (the Comfy
    #: model compiler stepped aside: ``compiler.OuterSampleHook``); it wraps the runs it notes.
    sample_notes: list[str] = field(default_factory=list)
    #: Attention overrides BCG does not own, each with the break that chains it (:meth:`attention_break_over`).
    foreign_attention: dict[int, BreakingAttention] = field(default_factory=dict)
    last_run: dict | None = None
    last_warmup: dict | None = None
    node_ids: set[str] = field(default_factory=set)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])

    def __post_init__(self) -> None:
        budget = self.config.memory_budget_mb * 2**20 or None
        name = self.adapter.family if self.adapter else "bcg"
        adapter = self.adapter
        self.runner = GraphRunner(
            limits=RunnerLimits(memory_budget_bytes=budget, evict_lru=self.captures_on_first_call),
            name=f"{name}#{self.id}",
            abort_errors=_interrupt_errors(),
            options=CaptureOptions(
                stage_host_copies=self.stage_host_copies or bool(adapter and adapter.stage_host_copies),
                replay_host_reads=bool(adapter and adapter.replay_host_reads),
                opaque_keyed=frozenset(adapter.opaque_args if adapter else ()),
            ),
        )
        if self.permanent_refusal:
            self.runner.disable(self.permanent_refusal)
        SESSIONS[self.id] = self

    def __deepcopy__(self, memo):
        return self

    @property
    def captures_on_first_call(self) -> bool:
        return self.config.capture is CapturePolicy.ON_FIRST_CALL

    @property
    def buckets_text(self) -> bool:
        """Whether a family whose model pads its caption itself keys calls by the padded length
        (``ModelAdapter.padded_text``, one graph per text bucket): not in mode fast, which keys the
        exact length. The decision and the warm-up's plan both follow it."""
        return self.config.mode is not Mode.FAST

    def status(self) -> dict:
        return report.status(self)

    # ----------------------------------------------------------------- run lifecycle
    def begin_run(self, model_patcher: Any, steps: int | None, model_options: dict | None) -> Run:
        """A sampling run starts, after ComfyUI loaded the model: its :class:`Run` (a warm-up's
        while :attr:`capture_log` is set), with the runner switched on or off for it. A run that can
        replay nothing (a guard refuses it) is not checked against the fingerprint at all; a
        warm-up takes the fingerprint at once, since every call of it captures."""
        kind = RunKind.WARMUP if self.capture_log is not None else RunKind.SAMPLING
        compiled = guards.compile_refusal(model_patcher)
        scratch = self.adapter.forward_scratch_attributes if self.adapter else ()
        reason = None if self.permanent_refusal else guards.run_refusal(model_patcher)
        checked = not self.permanent_refusal and not (reason and kind is RunKind.SAMPLING)
        run = self.run = Run(model_patcher, kind, steps, model_options, scratch, compiled, checked)
        if self.permanent_refusal:
            return run
        if not checked:
            # The graphs stay; the next run that can replay takes its own fingerprint and keeps
            # only those captured under it.
            self.runner.disable(reason)
            return run
        self._set_auto_budget(model_patcher)
        reason = reason or (None if run.warming else self.stale)
        if reason:
            self.runner.disable(reason)
        else:
            self.runner.enable()
        if run.warming:
            self.fingerprint(run)
        return run

    def end_run(self, run: Run) -> None:
        """The run ended: DiT calls outside a run (no fingerprint taken) run eager."""
        if run.state is not None:
            self.last_state = run.state
        if self.run is run:
            self.run = None

    def fingerprint(self, run: Run) -> fingerprint.Fingerprint:
        """The run's fingerprint (:meth:`.run.Run.fingerprint`). Its first take drops every graph
        captured under another (weights moved, a module override, object patches or attention
        changed); one holding something BCG cannot classify turns BCG off for the run with that
        reason. Under 'warm-up only', BCG then stays off until the next warm-up captures against
        the new state; 'on first call' captures the new state's graphs as their calls come."""
        state, first = run.fingerprint()
        if first and self.runner.drop_unbound(state):
            change = state.change_from(self.last_state) if self.last_state is not None else "the model changed"
            if run.warming:
                self.invalidate(f"{change}: graphs dropped; this warm-up captures them again", disable=False)
            elif self.captures_on_first_call:
                self.invalidate(
                    f"{change}: graphs dropped; each shape is captured again on its first call", disable=False
                )
            else:
                self.invalidate(f"{change} since warm-up: graphs dropped; run BCG Warmup Capture again")
        if first:
            self.last_state = state
            if run.warming:
                self.stale = None  # what this warm-up captures is bound to the state just taken
        if state.refusal is not None and self.runner.disabled_reason is None:
            self.runner.disable(state.refusal)
        return state

    def gate(self, run: Run, label: str) -> Gate:
        """Count a DiT call of signature ``label`` and return what the runner's capture gate weighs.

        Most families: the calls this run will still make (one per step; a sampler calling the
        model twice per step makes it an underestimate, which only makes captures wait longer):
        the runner tells a new run by that count growing. A family whose labels hold the step
        (``ModelAdapter.keys_per_step``) meets each label once or twice per run (cond, uncond), so
        the count cannot grow: it gives the most calls of the label one run made and the earlier
        runs it was met in. No counts where the steps are unknown."""
        on_first_call = self.captures_on_first_call
        if run.steps is None:
            return Gate(on_first_call)
        run.seen[label] += 1
        if self.adapter is not None and self.adapter.keys_per_step:
            if run.seen[label] == 1:
                self.label_runs[label] += 1
                if len(self.label_runs) > LABEL_RUNS_KEPT:  # forget the oldest: they only wait longer
                    for old in list(self.label_runs)[: LABEL_RUNS_KEPT // 2]:
                        del self.label_runs[old]
                        self.label_calls.pop(old, None)
            self.label_calls[label] = max(self.label_calls[label], run.seen[label])
            return Gate(on_first_call, self.label_calls[label], self.label_runs[label] - 1)
        return Gate(on_first_call, max(0, run.steps - run.seen[label]))

    def attention_break_over(self, override: Any) -> BreakingAttention:
        """The attention break that runs ``override`` (an ``optimized_attention_override`` BCG does
        not own: core's Model Attention Backend, KJNodes' Sage patch) eagerly between graph
        segments, one per override object. A graph captured through it keeps calling that
        override at every replay (its break holds it, so its id in the call's key is never
        reused while the graph lives)."""
        breaking = self.foreign_attention.get(id(override))
        if breaking is None or breaking.previous is not override:
            breaking = self.foreign_attention[id(override)] = BreakingAttention(override)
            while len(self.foreign_attention) > FOREIGN_ATTENTION_KEPT:  # graphs hold their own
                del self.foreign_attention[next(iter(self.foreign_attention))]
        return breaking

    def invalidate(self, reason: str, disable: bool = True) -> None:
        """Say that graphs were dropped (their addresses are no longer the model's) and why;
        ``disable``: BCG stays off until the next warm-up. (The runner already gave the dropped
        graphs' pools back to the device.)"""
        global _invalidations
        _invalidations += 1
        log.warning("[BCG] %s", reason)
        if disable:
            self.stale = reason
            self.runner.disable(reason)

    def _set_auto_budget(self, model_patcher: Any) -> None:
        """memory_budget_mb 0 on CUDA: the budget is a share of the VRAM free once ComfyUI has
        loaded the model, taken at the first run (later runs keep it: graphs then hold some of it)."""
        import torch

        if self.config.memory_budget_mb or self.runner.limits.memory_budget_bytes is not None:
            return
        device = getattr(model_patcher, "load_device", None)
        if getattr(device, "type", None) != "cuda" or not torch.cuda.is_available():
            return
        free, _ = torch.cuda.mem_get_info(device)
        budget = int(free * AUTO_BUDGET_SHARE)
        self.runner.set_memory_budget(budget)
        log.info("[BCG] graph memory budget %.0f MiB (%.0f%% of the VRAM free after loading the model)",
                 budget / 2**20, AUTO_BUDGET_SHARE * 100)  # fmt: skip
