"""The one decision per DiT call: serve a proven graph, capture the call, or run it eager and say why.

:func:`decide` is the only place that chooses, from the call's key and the model's fingerprint
(:mod:`.fingerprint`); the DIFFUSION_MODEL hook carries the choice out and nothing else. In order,
a call runs eager (with a :class:`~bcg_runtime.core.reasons.Reason` naming the cause) when:

0. the call is made while another CUDA graph capture is under way on this thread (ComfyUI's
   per-block graphs, another node's cudagraphs): BCG does not graph a graph;
1. BCG is off for the model or this run (no CUDA, unsupported, lowvram, compiled, or the run's
   fingerprint holds something unclassified), outside a warm-up;
2. another DIFFUSION_MODEL wrapper would run inside BCG's;
3. the call comes outside a sampling run (no fingerprint was taken);
4. it comes from another thread or for another device than the run's (ComfyUI's multi-GPU CFG
   split): that device's weights are not in the fingerprint;
5. its ``transformer_options`` hold what a graph cannot serve (:func:`.options.options_key`), or
   the family's adapter refuses it;
6. the run's fingerprint (taken at the first call that needs it, and again when a cheap token
   says the model's modules changed since) holds something unclassified.

Otherwise the runner decides from the key and the fingerprint (``state``): serve the entry
captured under an equal fingerprint, capture (first call, or warm-up), or eager (not captured,
blocked, not worth a capture yet). The fingerprint is handed over as a
:class:`~bcg_runtime.core.runner.LazyState`: a call that runs eager whatever the model's state
(not captured, blocked, put off) never walks the model.
"""

from __future__ import annotations

import functools
import inspect
import threading
from dataclasses import dataclass, field
from typing import Any

from ..core import reasons
from ..core.reasons import Reason
from ..core.runner import CAPTURE, EAGER, Decision, LazyState, StateRefused
from . import fingerprint
from .options import ATTENTION_OVERRIDE, options_key
from .session import BreakingAttention

#: Reason of a DiT call made while someone else captures a CUDA graph around it.
FOREIGN_CAPTURE = Reason(
    reasons.CORE_GRAPH,
    "the DiT is called inside another CUDA graph capture (ComfyUI's or another node's): BCG does not graph a graph, "
    "the call runs as it would without BCG",
)
#: Reason of a DiT call made outside a sampling run, where BCG has not checked the model's state.
OUTSIDE_RUN = Reason(reasons.OUTSIDE_RUN, "outside a sampling run: the model's weights were not checked for this call")
MULTIGPU = "multigpu_thread_device"


@dataclass
class CallPlan:
    """A decision with what carrying it out needs: the bound call and the runner's dispatch."""

    decision: Decision
    call: dict = field(default_factory=dict)
    dispatch: dict = field(default_factory=dict)


def eager(reason: Reason | str, call: dict | None = None) -> CallPlan:
    return CallPlan(Decision(EAGER, reason=reason), call or {})


def decide(session: Any, executor: Any, args: tuple, kwargs: dict) -> CallPlan:
    """The decision for one DiT call (see the module docstring). ``executor``: ComfyUI's
    WrapperExecutor at BCG's hook (its ``class_obj`` is the DiT)."""
    runner = session.runner
    warming = session.capture_log is not None
    if foreign_capture():
        return eager(FOREIGN_CAPTURE)
    if runner.disabled_reason is not None and not warming:
        return eager(Reason(reasons.DISABLED, f"disabled: {runner.disabled_reason}"))
    if executor.idx != len(executor.wrappers) - 1:
        inner = len(executor.wrappers) - 1 - executor.idx
        return eager(Reason(reasons.WRAPPER, f"{inner} DIFFUSION_MODEL wrapper(s) run inside BCG"))
    if session.state is None:
        return eager(OUTSIDE_RUN)
    call = bind_call(executor.class_obj, args, kwargs)
    options = call.get("transformer_options") or {}
    if threading.get_ident() != session.run_thread or options.get(MULTIGPU) is not None:
        return eager(
            Reason(reasons.THREAD, "multi-GPU split: a call on another device or thread than the run's; its weights are not in BCG's fingerprint"),
            call,
        )  # fmt: skip
    own = session.attention
    override = options.get(ATTENTION_OVERRIDE)
    if override is not None and override is not own and not isinstance(override, BreakingAttention):
        # An attention override BCG does not own (installed after BCG Apply, or in mode full):
        # this call runs it at attention breaks, keyed by which override it is.
        own = session.attention_break_over(override)
        options = call["transformer_options"] = {**options, ATTENTION_OVERRIDE: own}
    extra, refusal = options_key(options, own)
    refusal = refusal or session.adapter.refusal(call)
    if refusal:
        return eager(refusal if isinstance(refusal, Reason) else Reason(reasons.OPTIONS, refusal), call)
    dispatch = {
        "key_extra": (extra, _attention_backend(), id(own.previous) if own else None, session.adapter.call_key(call)),
        "opaque": ("transformer_options",) + session.adapter.opaque_args,
        "label": session.adapter.label(call),
    }
    if warming:
        state = session.run_state()
        if state.refusal is not None:
            return eager(state.refusal, call)
        return CallPlan(Decision(CAPTURE), call, {**dispatch, "state": state})
    calls_left, runs_seen = session.record_call(dispatch["label"])
    decision = runner.decide(
        (), call, capture_first_call=session.captures_on_first_call, calls_left=calls_left, runs_seen=runs_seen,
        state=LazyState(lambda: _servable_state(session)), **dispatch,
    )  # fmt: skip
    return CallPlan(decision, call, dispatch)


@functools.lru_cache(maxsize=None)
def _forward_signature(cls: type) -> tuple[inspect.Signature, str | None]:
    # ``forward`` where the class has no ``_forward``: its calls reach BCG through _ForwardThroughBCG.
    sig = inspect.signature(getattr(cls, "_forward", None) or cls.forward)
    varkw = next((p.name for p in sig.parameters.values() if p.kind is p.VAR_KEYWORD), None)
    return sig, varkw


def bind_call(diffusion_model: Any, args: tuple, kwargs: dict) -> dict:
    """Name every argument of a DiT ``_forward`` call (models pass them positionally)."""
    sig, varkw = _forward_signature(type(diffusion_model))
    bound = sig.bind(diffusion_model, *args, **kwargs).arguments
    call = {k: v for k, v in bound.items() if k != "self" and k != varkw}
    call.update(bound.get(varkw, {}) if varkw else {})
    return call


def _servable_state(session: Any) -> fingerprint.Fingerprint:
    """The run's fingerprint for the runner's :class:`LazyState` (taken at the first call that
    needs it); :class:`StateRefused` when it holds something BCG cannot classify."""
    state = session.run_state()
    if state.refusal is not None:
        raise StateRefused(state.refusal)
    return state


def foreign_capture() -> bool:
    """Whether a CUDA graph capture that is not BCG's is under way on this thread's stream (BCG's
    own never reaches this hook: it captures below it). Never initialises CUDA."""
    import torch

    from ..core.breaks import is_capturing

    return torch.cuda.is_initialized() and torch.cuda.is_current_stream_capturing() and not is_capturing()


def _attention_backend() -> str:
    import comfy.ldm.modules.attention as attention

    return getattr(attention.optimized_attention, "__name__", "unknown")
