"""BCGSession: everything BCG keeps for one model, shared by every clone of its ModelPatcher.

ComfyUI deep-copies ``model_options`` when it clones a model, and list-copies wrappers. A session
holds CUDA graphs and must never be copied, so it (and every wrapper that points at it) returns
itself from ``__deepcopy__``. None of these objects has a ``.to`` method: ComfyUI calls ``.to`` on
any wrapper that has one after sampling.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import threading
import uuid
import weakref
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ..core import EXACT, CaptureStrategy, GraphRunner, RunnerLimits, reasons, summarize_run
from ..core.breaks import graph_break, is_capturing
from ..core.reasons import headline, kind_of
from . import fingerprint, guards
from .models import ModelAdapter
from .options import WatchedOptions, watched_call

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


class Mode(enum.Enum):
    """How a forward is cut into graphs."""

    #: 'full' where the model's adapter says the whole forward is graph-safe, else 'breakable'.
    AUTO = "auto"
    #: Attention runs eagerly between captured segments (one break per attention call). Every
    #: tensor crossing a break is held for the graph's life, so graph memory grows with the
    #: number of breaks (figures: docs/benchmarks.md, "Figures the design rests on").
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

#: How many per-step labels :attr:`BCGSession.label_runs` keeps; past it the older half is dropped
#: (a dropped label's captures wait one more run, nothing else changes).
LABEL_RUNS_KEPT = 4096
#: Foreign attention overrides a session keeps a break for (a graph holds the break it was captured through).
FOREIGN_ATTENTION_KEPT = 8
#: :attr:`BCGSession.state` inside a run before any call needed the fingerprint.
NOT_TAKEN = "fingerprint not taken yet"


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


def _interrupt_errors() -> tuple[type[BaseException], ...]:
    """ComfyUI's Cancel, which must end a capture without blocking its shape."""
    try:
        import comfy.model_management as mm
    except ImportError:  # the core is usable without ComfyUI (tests, scripts)
        return ()
    return (mm.InterruptProcessingException,)


#: The live call's ``transformer_options`` as they were when the DiT was called (before the
#: forward wrote its block entries into them): the attention break reads them at every replay.
CALL_OPTIONS: ContextVar[dict | None] = ContextVar("bcg_call_options", default=None)


class BreakingAttention:
    """The attention break site, installed as ``transformer_options["optimized_attention_override"]``.

    Chains any override that was there before BCG Apply. A replayed break must see the *live*
    call's ``transformer_options`` (a sigma-dependent override reads this step's ``sigmas``), plus
    the entries the DiT wrote into them on its way to this block (``block_index``, ...), which a
    replay does not write, since the DiT's Python does not run. So under capture the break records
    only those written entries (the difference from the options the DiT was called with,
    :data:`CALL_OPTIONS`), and every run of it, at capture and at each replay, passes
    the live call's options with them laid over.
    """

    def __init__(self, previous: Any = None):
        self.previous = previous

    def __call__(self, func, *args, **kwargs):
        if self.previous is not None:
            args = (func, *args)
            func = self.previous
        options = kwargs.get("transformer_options")
        if is_capturing() and isinstance(options, dict):
            entry = CALL_OPTIONS.get() or {}
            written = {k: v for k, v in options.items() if k not in entry or entry[k] is not v}
            del kwargs["transformer_options"]
            # ``written`` travels as an argument: each replay passes it as captured (its tensors are
            # the graph's reads), while the live options are fetched anew (the live call's reads).
            return graph_break(_WithLiveOptions(func), *args, **kwargs, **{_WRITTEN: written})
        if isinstance(options, WatchedOptions):
            # The proof's eager run: a break reads the live call's options at every replay, so its
            # reads (a sigma-dependent override's ``sigmas``) are not the graph's; unwatched, as a
            # replay hands them (a plain dict).
            kwargs["transformer_options"] = dict(options)
        return graph_break(func, *args, **kwargs)

    def __deepcopy__(self, memo):
        return self


#: The keyword under which :class:`BreakingAttention` passes the options the DiT wrote to its break.
_WRITTEN = "bcg_written_options"


class _WithLiveOptions:
    """``func`` called with the live call's ``transformer_options`` and the entries the DiT wrote
    (keyword :data:`_WRITTEN`) laid over them."""

    def __init__(self, func):
        self.func = func
        self.__qualname__ = getattr(func, "__qualname__", type(func).__qualname__)

    def __call__(self, *args, **kwargs):
        options = dict(CALL_OPTIONS.get() or {})
        options.update(kwargs.pop(_WRITTEN))
        return self.func(*args, transformer_options=options, **kwargs)


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
    attention: BreakingAttention | None = None
    #: Mode fast: the compiled twins of the DiT's repeated blocks (``fast.RegionalCompile``).
    fast: Any = None
    #: Why graphs can never serve this model (no CUDA, unsupported family); None when they can.
    permanent_refusal: str | None = None
    #: Stage the forward's host-to-device copies through pinned buffers (the adapter asks, or the
    #: weights' own class copies host tensors in the forward: ``guards.plain_subclass_weights``).
    stage_host_copies: bool = False
    #: Set when graphs were dropped because what they read changed; cleared by the next warm-up.
    stale: str | None = None
    #: The model's :class:`fingerprint.Fingerprint` for the run in progress (None outside a run,
    #: :data:`NOT_TAKEN` until a call of the run needs it: :meth:`run_state`). Every capture
    #: records it and every replay must match it (:mod:`.decision`).
    state: Any = None
    #: Whether the run in progress is a warm-up's.
    run_warming: bool = False
    #: The fingerprint of the last run that began: what the live entries were captured under.
    last_state: fingerprint.Fingerprint | None = None
    #: The run's thread, its ``model_options``, the module dictionaries its per-call token watches,
    #: and that token (see :meth:`run_state`).
    run_thread: int | None = None
    run_options: dict | None = None
    run_dicts: fingerprint.WatchedModules = field(default_factory=lambda: fingerprint.module_dicts(None))
    run_token: tuple = ()
    run_patcher: Any = None
    #: How this mode captures and accepts graphs (mode fast: ``fast.strategy()``).
    strategy: CaptureStrategy = EXACT
    #: A list while a warm-up runs: DiT calls then capture instead of replaying.
    capture_log: list[CaptureRecord] | None = None
    verified: set[str] = field(default_factory=set)
    last_run: dict | None = None
    last_warmup: dict | None = None
    node_ids: set[str] = field(default_factory=set)
    #: The sampling steps of the run in progress and the DiT calls seen per signature (:meth:`record_call`).
    run_steps: int | None = None
    run_seen: Counter = field(default_factory=Counter)
    #: Runs each label was met in (``keys_per_step`` families: see :meth:`record_call`), at most
    #: :data:`LABEL_RUNS_KEPT` labels (a server sampling many schedules meets new ones forever).
    label_runs: Counter = field(default_factory=Counter)
    #: The most DiT calls of each of those labels one run made (cond and uncond: 2).
    label_calls: Counter = field(default_factory=Counter)
    #: DiT calls the DIFFUSION_MODEL hook ran for in Python (wrappers.ApplyModelHook counts the rest).
    hook_calls: int = 0
    #: The run's compile refusal while a torch.compile'd forward serves its DiT calls, else None.
    compiled_run: str | None = None
    #: What the run's summary says besides its counts (the Comfy model compiler stepped aside:
    #: ``compiler.OuterSampleHook``); set around one sampling run.
    run_notes: list[str] = field(default_factory=list)
    #: Attention overrides BCG does not own, each with the break that chains it (:meth:`attention_break_over`).
    foreign_attention: dict[int, "BreakingAttention"] = field(default_factory=dict)
    #: What the run's summary says of the foreign overrides its calls ran through; set per run.
    run_attention: set[str] = field(default_factory=set)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])

    def __post_init__(self) -> None:
        budget = self.config.memory_budget_mb * 2**20 or None
        name = self.adapter.family if self.adapter else "bcg"
        limits = RunnerLimits(memory_budget_bytes=budget, evict_lru=self.captures_on_first_call)
        self.runner = GraphRunner(
            limits=limits,
            name=f"{name}#{self.id}",
            abort_errors=_interrupt_errors(),
            stage_host_copies=self.stage_host_copies or bool(self.adapter and self.adapter.stage_host_copies),
            replay_host_reads=bool(self.adapter and self.adapter.replay_host_reads),
            bound_storages=self._bound_storages,
            opaque_keyed=self.adapter.opaque_args if self.adapter else (),
            state_after_capture=self._state_after_capture,
            watched_kwargs=watched_call,
        )
        if self.permanent_refusal:
            self.runner.disable(self.permanent_refusal)
        SESSIONS[self.id] = self

    def __deepcopy__(self, memo):
        return self

    @property
    def captures_on_first_call(self) -> bool:
        return self.config.capture is CapturePolicy.ON_FIRST_CALL

    # ----------------------------------------------------------------- run lifecycle
    def begin_run(
        self, model_patcher: Any, warming: bool, steps: int | None = None, model_options: dict | None = None
    ) -> None:
        """Called when a sampling run starts, after ComfyUI loaded the model; ``steps``: the
        run's sampling steps (len(sigmas) - 1), from which :meth:`record_call` counts down;
        ``model_options``: the run's own (the guider's copy).

        The run's fingerprint is taken by :meth:`run_state` at the first DiT call that needs it
        (one with an entry to check, or one to capture), so a run whose calls all run eager
        anyway walks nothing; a warm-up takes it here, since every call of it captures.
        """
        self.compiled_run = guards.compile_refusal(model_patcher)
        self.run_attention = set()
        if self.permanent_refusal:
            return
        self.run_steps, self.run_seen = steps, Counter()
        self.run_thread, self.run_patcher = threading.get_ident(), model_patcher
        self.run_options = model_options if model_options is not None else model_patcher.model_options
        reason = guards.run_refusal(model_patcher)
        if reason and not warming:
            # Nothing can replay in this run: no fingerprint walk. The graphs stay; the next run
            # that can replay takes its own fingerprint and keeps only those captured under it.
            self.state = None
            self.runner.disable(reason)
            return
        self.run_warming = warming
        self.state = NOT_TAKEN
        self._set_auto_budget(model_patcher)
        reason = reason or (None if warming else self.stale)
        if reason:
            self.runner.disable(reason)
        else:
            self.runner.enable()
        if warming:
            self.run_state()

    def attention_break_over(self, override: Any) -> "BreakingAttention":
        """The attention break that runs ``override`` (an ``optimized_attention_override`` BCG does
        not own: core's Model Attention Backend, KJNodes' Sage patch) eagerly between graph
        segments, one per override object. A graph captured through it keeps calling that
        override at every replay (its break holds it, so its id in the call's key is never
        reused while the graph lives); the run's summary names it once."""
        breaking = self.foreign_attention.get(id(override))
        if breaking is None or breaking.previous is not override:
            breaking = self.foreign_attention[id(override)] = BreakingAttention(override)
            while len(self.foreign_attention) > FOREIGN_ATTENTION_KEPT:  # graphs hold their own
                del self.foreign_attention[next(iter(self.foreign_attention))]
        self.run_attention.add(
            f"attention override {fingerprint.qualname(override)} runs eagerly between graph segments"
        )
        return breaking

    def run_state(self) -> fingerprint.Fingerprint:
        """The run's fingerprint: taken at the first call that asks, and taken again when the
        modules' cheap token moved since (a node that hooks or overrides a module in the middle of
        a run). The first take drops every graph captured under another fingerprint (weights moved,
        a module override, object patches or attention changed); one holding something BCG cannot
        classify turns BCG off for the run with that reason. Under 'warm-up only', BCG then stays
        off until the next warm-up captures against the new state; 'on first call' captures the
        new state's graphs as their calls come."""
        if self.state is NOT_TAKEN:
            self._take_run_state()
        elif fingerprint.modules_token(self.run_dicts) != self.run_token:
            self.state = self.take_fingerprint()
            self._watch_modules()
        return self.state

    def _take_run_state(self) -> None:
        state = self.take_fingerprint()
        self._watch_modules()
        if self.runner.retain(state):
            change = state.change_from(self.last_state) if self.last_state is not None else "the model changed"
            if self.run_warming:
                self.invalidate(f"{change}: graphs dropped; this warm-up captures them again", disable=False)
            elif self.captures_on_first_call:
                self.invalidate(
                    f"{change}: graphs dropped; each shape is captured again on its first call", disable=False
                )
            else:
                self.invalidate(f"{change} since warm-up: graphs dropped; run BCG Warmup Capture again")
        if self.run_warming:
            self.stale = None  # what this warm-up captures is bound to the state just taken
        self.state = self.last_state = state
        if state.refusal is not None and self.runner.disabled_reason is None:
            self.runner.disable(state.refusal)

    def _state_after_capture(self, state: Any) -> Any:
        """The state a proven capture is bound to (the runner's ``state_after_capture``): ``state``,
        or the run's fingerprint taken again where a process setting that picks kernels changed
        during the capture. torch settles its SDPA backend order at a process's first attention call
        (cuDNN's attention first on Hopper, unless that call ran inside ComfyUI's own
        ``set_priority``): where that call is a capture's warm-up run, the capture and its proof ran
        under the settled order while ``state`` holds the order before it, and binding the graph to
        ``state`` would drop it at the next run. Graphs captured earlier in the run, under the old
        settings, are dropped at their next call as for any change of the fingerprint."""
        if not isinstance(state, fingerprint.Fingerprint) or not fingerprint.process_settings_changed(state):
            return state
        now = self.take_fingerprint()
        log.info(
            "[BCG] %s: %s during a capture: the graph is bound to the settings it was captured and proven under",
            self.runner.name, now.change_from(state),
        )  # fmt: skip
        if self.state is state:
            self.state = self.last_state = now
        if now.refusal is not None and self.runner.disabled_reason is None:
            self.runner.disable(now.refusal)
        return now

    def _watch_modules(self) -> None:
        """Start the per-call token over the run model's module dictionaries as they are now."""
        self.run_dicts = fingerprint.module_dicts(self.run_patcher.model.diffusion_model)
        self.run_token = fingerprint.modules_token(self.run_dicts)

    def record_call(self, label: str) -> tuple[int | None, int | None]:
        """Count a DiT call of signature ``label``; returns ``(calls_left, runs_seen)`` for the
        runner's capture gate (``GraphRunner.decide``).

        Most families: the calls this run will still make (one per step; a sampler calling the
        model twice per step makes it an underestimate, which only makes captures wait longer),
        and None: the runner tells a new run by that count growing. A family whose labels hold the
        step (``ModelAdapter.keys_per_step``) meets each label once or twice per run (cond, uncond),
        so the count cannot grow: it gives the most calls of the label one run made and the earlier
        runs it was met in, the gate's evidence of the runs to come. ``(None, None)`` outside a run
        or when the steps are unknown."""
        if self.run_steps is None:
            return None, None
        self.run_seen[label] += 1
        if self.adapter is not None and self.adapter.keys_per_step:
            if self.run_seen[label] == 1:
                self.label_runs[label] += 1
                if len(self.label_runs) > LABEL_RUNS_KEPT:  # forget the oldest: they only wait longer
                    for old in list(self.label_runs)[: LABEL_RUNS_KEPT // 2]:
                        del self.label_runs[old]
                        self.label_calls.pop(old, None)
            self.label_calls[label] = max(self.label_calls[label], self.run_seen[label])
            return self.label_calls[label], self.label_runs[label] - 1
        return max(0, self.run_steps - self.run_seen[label]), None

    def take_fingerprint(self) -> fingerprint.Fingerprint:
        """The fingerprint of the run's model now (:func:`fingerprint.take`)."""
        return fingerprint.take(self.run_patcher, self.run_options, self._scratch())

    def _scratch(self) -> tuple[str, ...]:
        return self.adapter.forward_scratch_attributes if self.adapter else ()

    def _bound_storages(self) -> set[int]:
        """What the run's fingerprint binds by address, for the runner's capture (``bound_storages``)."""
        if self.run_patcher is None:
            return set()
        return fingerprint.bound_storages(self.run_patcher, self._scratch())

    def clear_run_state(self) -> None:
        """A sampling run ended: DiT calls outside a run (no fingerprint taken) run eager."""
        self.state = None
        self.run_steps = None
        self.run_patcher = self.run_options = self.run_thread = None
        self.run_dicts, self.run_token = fingerprint.module_dicts(None), ()

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

    def publish_run(self, replayed: int, eager: Any, evicted: int = 0) -> None:
        """Log the run's one line, keep it as :attr:`last_run` and send it to the browser (a run
        with no DiT call says nothing)."""
        calls = replayed + sum(eager.values())
        if not calls:
            return
        notes = [*self.run_notes, *sorted(self.run_attention)]
        summary = "; ".join([summarize_run(replayed, eager, evicted), *notes])
        log.info("[BCG] %s", self.log_line(replayed, calls, eager, summary))
        self.last_run = {
            "replayed": replayed,
            "calls": calls,
            "eager": dict(eager),
            "eager_kinds": {str(r): kind_of(r) for r in eager},
            "evicted": evicted,
            "notes": notes,
            "summary": summary,
            "state": self.badge_state(replayed, calls),
        }
        from . import events

        events.publish(self)

    def log_line(self, replayed: int, calls: int, eager: Any, summary: str) -> str:
        """The run's one log line: the model and the summary; a run that BCG was off for says so
        in a few words (the reason itself was logged once, at start-up or by BCG Apply)."""
        model = self.adapter.display_name if self.adapter else "unsupported model"
        off = self.runner.disabled_reason
        if off and not replayed and all(kind_of(r) == reasons.DISABLED for r in eager):
            return f"{model}: {calls} DiT calls ran eager, BCG is off ({headline(off)})"
        return f"{model}: {summary}"

    def badge_state(self, replayed: int, calls: int) -> str:
        """'replayed' (all), 'partial' or 'off' (none), the badge colours of the UI."""
        if calls and replayed == calls:
            return "replayed"
        return "partial" if replayed else "off"

    # ----------------------------------------------------------------- reporting
    def disabled_scope(self) -> str | None:
        """'process' when BCG is off because no model of this process can run (the reason said at
        start-up), 'model' when off for this model or run, None when on."""
        off = self.runner.disabled_reason
        if not off:
            return None
        return "process" if off == guards.process_refusal() else "model"

    def _warmup_status(self) -> dict | None:
        warm = self.last_warmup
        if warm and warm.get("refusal"):
            return {**warm, "refusal_short": headline(warm["refusal"])}
        return warm

    def status(self) -> dict:
        """JSON for the HTTP route and UI events."""
        stats = self.runner.stats
        return {
            "id": self.id,
            "model": self.adapter.display_name if self.adapter else None,
            "mode": self.config.mode.value,
            "mode_from_auto": self.config.from_auto,
            "capture": self.config.capture.value,
            "disabled": self.runner.disabled_reason,
            # a few words of it for the badge, and whether no model of this process can run (--cpu, no CUDA)
            "disabled_short": headline(self.runner.disabled_reason) if self.runner.disabled_reason else None,
            "disabled_scope": self.disabled_scope(),
            "node_ids": sorted(self.node_ids),
            "captured": [e.as_dict() for e in self.runner.entries()],
            "blocked": self.runner.blocked(),
            "blocked_kinds": {shape: kind_of(r) for shape, r in self.runner.blocked().items()},
            "hits": stats.hits,
            "eager": dict(stats.eager),
            "eager_kinds": {str(r): kind_of(r) for r in stats.eager},
            "captures": stats.captures,
            "evictions": stats.evictions,
            "memory_budget_bytes": self.runner.limits.memory_budget_bytes,
            "capture_seconds": round(stats.capture_seconds, 3),
            # what first-call captures are weighed with (medians of recent captures; None: none yet)
            "capture_cost_ms": round(1000 * stats.costs.overhead_s, 1) if stats.costs.samples else None,
            "replay_saving_ms": round(1000 * stats.costs.saving_s, 2) if stats.costs.samples else None,
            "pool_bytes": stats.pool_bytes,
            "graph_bytes": self.runner.memory_bytes,
            "last_run": self.last_run,
            "last_warmup": self._warmup_status(),
        }
