"""The one decision per DiT call: a frozen :class:`CallPlan` that the DIFFUSION_MODEL hook carries
out without deciding anything itself.

In order, a call runs eager, with a :class:`~bcg_runtime.core.reasons.Reason` naming the cause, when:

0. it is made while another CUDA graph capture is under way on this thread (ComfyUI's per-block
   graphs, another node's cudagraphs): BCG does not graph a graph;
1. BCG is off for the model or this run (no CUDA, unsupported, lowvram, compiled, or the run's
   fingerprint holds something unclassified), outside a warm-up;
2. another DIFFUSION_MODEL wrapper would run inside BCG's;
3. the call comes outside a sampling run BCG checks (no fingerprint can be taken);
4. it comes from another thread or for another device than the run's (ComfyUI's multi-GPU CFG
   split): that device's weights are not in the fingerprint;
5. its ``transformer_options`` hold what a graph cannot serve (:func:`.options.options_key`), or
   the family's adapter refuses it;
6. the runner's ``lookup`` says so without the model's state (not captured, blocked, put off);
   a call whose signature (:func:`_signature`) the run met before skips its keying: the runner's
   ``verdict`` on the key that signature was given decides it;
7. the run's fingerprint, taken only now, holds something unclassified, or the runner's
   ``resolve`` under it says so (its graph was bound to another state and is not captured again).

Otherwise the plan serves the graph bound to an equal fingerprint or captures the call; in a
warm-up every call that passes 0-5 is captured (idempotently) and logged.
"""

from __future__ import annotations

import enum
import functools
import inspect
import sys
import threading
from typing import Any, Hashable, NamedTuple

import torch

from ..core import Action, Decision, Dispatch, Pending, reasons
from ..core.breaks import is_capturing
from ..core.dispatch import key_call
from ..core.reasons import Reason, one_line
from ..core.trees import UnkeyableArgument, flatten_inputs
from .attention_break import BreakingAttention
from .config import Mode
from .fingerprint import qualname
from .host_facts import ATTENTION_OVERRIDE
from .models.base import PaddedText
from .options import options_key

#: Reason of a DiT call made while someone else captures a CUDA graph around it.
FOREIGN_CAPTURE = Reason(
    reasons.CORE_GRAPH,
    "the DiT is called inside another CUDA graph capture (ComfyUI's or another node's): BCG does not graph a graph, "
    "the call runs as it would without BCG",
)
#: Reason of a DiT call made outside a sampling run, where BCG has not checked the model's state.
OUTSIDE_RUN = Reason(reasons.OUTSIDE_RUN, "outside a sampling run: the model's weights were not checked for this call")
MULTIGPU = "multigpu_thread_device"


class Verify(enum.Enum):
    """What BCG Apply's verify does with this call."""

    NO = "no"
    #: First replay of a label in an exact mode: compare with eager, a difference drops the graph.
    EXACT = "exact"
    #: First replay of a label in mode fast: measure the difference from eager and log it.
    MEASURE = "measure"


class CallPlan(NamedTuple):
    """What the hook does with one DiT call: the runner's decision, the call's arguments by name
    as the runner keys them (empty where the call was never bound), what a capture keys it by,
    whether it is a warm-up's capture (logged, never served), what verify does, and the caption
    the model's own code padded before the key (``text``: then ``call`` is its padded form). A
    named tuple, as the runner's values (one is made per DiT call)."""

    decision: Decision
    call: dict
    dispatch: Dispatch | None = None
    warmup: bool = False
    verify: Verify = Verify.NO
    state: Any = None
    text: PaddedText | None = None

    @property
    def received(self) -> dict:
        """The call's arguments as the DiT received them: what an eager answer runs."""
        return self.text.received if self.text is not None else self.call


def eager(reason: Reason, call: dict | None = None, warmup: bool = False) -> CallPlan:
    return CallPlan(Decision.eager(reason), call or {}, warmup=warmup)


def decide(session: Any, executor: Any, args: tuple, kwargs: dict) -> CallPlan:
    """The plan for one DiT call (see the module docstring). ``executor``: ComfyUI's
    WrapperExecutor at BCG's hook (its ``class_obj`` is the DiT)."""
    runner, run = session.runner, session.run
    warming = run is not None and run.warming
    if foreign_capture():
        return eager(FOREIGN_CAPTURE, warmup=warming)
    if runner.disabled_reason is not None and not warming:
        return eager(Reason(reasons.DISABLED, f"disabled: {runner.disabled_reason}"))
    if executor.idx != len(executor.wrappers) - 1:
        inner = len(executor.wrappers) - 1 - executor.idx
        return eager(Reason(reasons.WRAPPER, f"{inner} DIFFUSION_MODEL wrapper(s) run inside BCG"), warmup=warming)
    if run is None or not run.checked:
        return eager(OUTSIDE_RUN, warmup=warming)
    call = bind_call(executor.class_obj, args, kwargs)
    options = call.get("transformer_options") or {}
    if threading.get_ident() != run.thread or options.get(MULTIGPU) is not None:
        return eager(
            Reason(reasons.THREAD, "multi-GPU split: a call on another device or thread than the run's; its weights are not in BCG's fingerprint"),
            call, warming,
        )  # fmt: skip
    own = session.attention
    override = options.get(ATTENTION_OVERRIDE)
    if override is not None and override is not own and not isinstance(override, BreakingAttention):
        # An attention override BCG does not own (installed after BCG Apply, or in mode full):
        # this call runs it at attention breaks, keyed by which override it is.
        own = session.attention_break_over(override)
        run.notes.add(f"attention override {qualname(override)} runs eagerly between graph segments")
        options = call["transformer_options"] = {**options, ATTENTION_OVERRIDE: own}
    extra, refusal = options_key(options, own)
    refusal = refusal or session.adapter.refusal(call)
    if refusal:
        return eager(refusal if isinstance(refusal, Reason) else Reason(reasons.OPTIONS, refusal), call, warming)
    adapter = session.adapter
    key_extra = (extra, _attention_backend(), id(own.previous) if own else None, adapter.call_key(call))
    # A signature met before in this run was keyed then: the runner's verdict on that key decides
    # the calls it can decide without the tensors (put off, not captured, blocked) at a fraction
    # of keying the call again (its caption padded, its label made). A family keyed per step never
    # meets a signature twice in a run.
    remembers = not warming and not adapter.keys_per_step
    signature = _signature(call, adapter.opaque_args, key_extra) if remembers else None
    known = run.keyed.get(signature) if signature is not None else None
    if known is not None:
        keyed, dispatch = known
        gate = session.gate(run, keyed.label)
        found = runner.verdict(keyed, gate)
        if found is not None:
            return CallPlan(found, call, dispatch)
    text = adapter.padded_text(executor.class_obj, call) if session.buckets_text else None
    received, call = call, text.call if text is not None else call
    if known is None:
        dispatch = Dispatch(
            key_extra=key_extra,
            opaque=("transformer_options",) + adapter.opaque_args + (text.unkeyed if text is not None else ()),
            label=adapter.label(received, lengths=text.lengths) if text is not None else adapter.label(call),
            variant=text.length if text is not None else None,
        )
    if warming:
        state = session.fingerprint(run)
        if state.refusal is not None:
            return eager(state.refusal, received, warmup=True)
        decision, text = _with_caption(Decision(Action.CAPTURE), text, dispatch)
        if decision.action is Action.EAGER:
            return eager(decision.reason, received, warmup=True)
        return CallPlan(decision, text.call if text else call, dispatch, warmup=True, state=state, text=text)
    if known is None:
        found = runner.lookup((), call, dispatch, session.gate(run, dispatch.label))
        if signature is not None and found.call is not None:
            run.remember(signature, (found.call.keyed(), dispatch))
    else:
        found = runner.pending(key_call((), call, dispatch), gate)
    if isinstance(found, Pending):
        # Taken only here: it may drop graphs bound to another, or turn the runner off for the run
        # (a fingerprint holding something unclassified), which resolve then says.
        found = runner.resolve(found, session.fingerprint(run))
    found, text = _with_caption(found, text, dispatch)
    if found.action is Action.EAGER:
        return CallPlan(found, received, dispatch)
    verify = Verify.NO
    if found.action is Action.SERVE and session.config.verify and dispatch.label not in session.verified:
        session.verified.add(dispatch.label)
        verify = Verify.MEASURE if session.config.mode is Mode.FAST else Verify.EXACT
    return CallPlan(found, text.call if text else call, dispatch, verify=verify, text=text)


def _with_caption(
    decision: Decision, text: PaddedText | None, dispatch: Dispatch
) -> tuple[Decision, PaddedText | None]:
    """A caption keyed by its embedding's shape, embedded now that the call captures or replays:
    the decision over the embedded call's tensors, or eager where the embedding raised or came out
    another shape than its key (never a replay over other inputs than the key's)."""
    if text is None or text.embed is None or decision.action is Action.EAGER:
        return decision, text
    try:
        text = text.embedded_call()
    except Exception as e:
        return Decision.eager(
            Reason(reasons.UNCLASSIFIED, f"the model's caption embedding raised ({one_line(e)})"), decision.call
        ), None
    if decision.call is None:  # a warm-up's capture keys the call itself
        return decision, text
    embedded = key_call((), text.call, dispatch)
    if embedded.key != decision.call.key:
        why = "the model's caption embedding came out another shape than the call was keyed by"
        return Decision.eager(Reason(reasons.UNCLASSIFIED, why), decision.call), None
    return decision._replace(call=embedded), text


class _Binder(NamedTuple):
    """How a DiT class's ``_forward`` names its arguments, read once per class: the instance's own
    parameter (``this``), those a positional argument fills, those a keyword may name, the
    ``**kwargs`` parameter and those without a default. ``simple`` False (``*args`` or
    positional-only parameters): every call goes through :meth:`inspect.Signature.bind`."""

    signature: inspect.Signature
    this: str
    positional: tuple[str, ...]
    named: frozenset[str]
    varkw: str | None
    required: frozenset[str]
    simple: bool
    #: The parameters a name may fill, in the signature's order.
    ordered: tuple[str, ...]


@functools.lru_cache(maxsize=None)
def _binder(cls: type) -> _Binder:
    # ``forward`` where the class has no ``_forward``: its calls reach BCG through _ForwardThroughBCG.
    sig = inspect.signature(getattr(cls, "_forward", None) or cls.forward)
    this, *params = sig.parameters.values()
    kind = inspect.Parameter
    varkw = next((p.name for p in params if p.kind is kind.VAR_KEYWORD), None)
    simple = not any(p.kind in (kind.VAR_POSITIONAL, kind.POSITIONAL_ONLY) for p in params)
    named = [p.name for p in params if p.kind in (kind.POSITIONAL_OR_KEYWORD, kind.KEYWORD_ONLY)]
    positional = tuple(p.name for p in params if p.kind is kind.POSITIONAL_OR_KEYWORD)
    required = frozenset(p.name for p in params if p.name in named and p.default is kind.empty)
    return _Binder(sig, this.name, positional, frozenset(named), varkw, required, simple, tuple(named))


def bind_call(diffusion_model: Any, args: tuple, kwargs: dict) -> dict:
    """Name every argument of a DiT ``_forward`` call (models pass them positionally): the
    parameters in the signature's order, then what ``**kwargs`` took in the call's order, as
    :meth:`inspect.Signature.bind` names them (which also raises for a call the forward would
    refuse; the common call forms are named without it, on the DiT's hot path)."""
    b = _binder(type(diffusion_model))
    if b.simple and len(args) <= len(b.positional):
        call = dict(zip(b.positional, args))
        extra = {}
        for name, value in kwargs.items():
            if name in call or name == b.this or (name not in b.named and b.varkw is None):
                break  # a duplicate or an unknown name: bind raises the forward's own error
            (call if name in b.named else extra)[name] = value
        else:
            if b.required <= call.keys():
                if kwargs:  # the signature's order, as bind gives it
                    call = {n: call[n] for n in b.ordered if n in call}
                call.update(extra)
                return call
    bound = b.signature.bind(diffusion_model, *args, **kwargs).arguments
    call = {k: v for k, v in bound.items() if k != b.this and k != b.varkw}
    call.update(bound.get(b.varkw, {}) if b.varkw else {})
    return call


def _signature(call: dict, opaque: tuple[str, ...], key_extra: Hashable) -> Hashable | None:
    """What a call's key and label follow from, made faster than the key: the spec of each
    tensor argument and the structure of every other, ``transformer_options`` and the family's
    opaque arguments through ``key_extra`` (which describes them). Within one run (one model, one
    mode) two calls of equal signatures are keyed alike. None where an argument cannot be keyed:
    such a call is keyed in full, which says why."""
    parts: list[Hashable] = [key_extra]
    for name, value in call.items():
        if isinstance(value, torch.Tensor):
            parts.append((name, value.shape, value.stride(), value.dtype, value.device))
        elif value is None:
            parts.append((name, None))
        elif name != "transformer_options" and name not in opaque:
            try:
                parts.append((name, flatten_inputs(value)[1]))
            except UnkeyableArgument:
                return None
    return tuple(parts)


def foreign_capture() -> bool:
    """Whether a CUDA graph capture that is not BCG's is under way on this thread's stream (BCG's
    own never reaches this hook: it captures below it). Never initialises CUDA."""
    return torch.cuda.is_initialized() and torch.cuda.is_current_stream_capturing() and not is_capturing()


def _attention_backend() -> str:
    attention = sys.modules.get("comfy.ldm.modules.attention")  # on every call: no import statement
    if attention is None:
        import comfy.ldm.modules.attention as attention

    return getattr(attention.optimized_attention, "__name__", "unknown")
