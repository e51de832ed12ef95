"""The ComfyUI hooks BCG installs on a cloned model, all under one key (:data:`BCG_KEY`).

- DIFFUSION_MODEL (innermost): keys each DiT call and replays it, or runs it eager with a reason;
  during a warm-up it captures instead.
- APPLY_MODEL: counts the DiT calls a torch.compile'd forward ran with the hook above traced away.
- SAMPLER_SAMPLE: per sampling run, after the model is loaded: guards (lowvram, Dynamic VRAM,
  moved weights), making BCG the innermost DIFFUSION_MODEL wrapper, and the run summary.
- PREPARE_SAMPLING: reserves the graphs' memory in ComfyUI's VRAM estimate, which cannot see
  private graph pools, so ComfyUI does not offload the DiT to make room we already hold.
- OUTER_SAMPLE (outermost): steps ComfyUI's model compiler (0.34+) aside for the run
  (``compiler.py``); inert on a ComfyUI without it.
- ``transformer_options["optimized_attention_override"]``: the attention break (mode breakable).
"""

from __future__ import annotations

import logging
from typing import Any

import torch

from ..core import Action, CaptureStatus, reasons
from ..core.dispatch import Reference
from ..core.reasons import Reason, one_line
from ..core.trees import outputs_equal
from . import guards, report
from .attention_break import CALL_OPTIONS, BreakingAttention
from .compiler import OuterSampleHook
from .config import BCGConfig, Mode
from .decision import CallPlan, Verify, bind_call, decide
from .fast import NOT_BIT_EXACT, RegionalCompile
from .sdpa_order import cudnn_attention_preferred
from .session import BCGSession, CaptureRecord

log = logging.getLogger(__name__)

BCG_KEY = "bcg"


class _SessionHook:
    """Base of the hooks: bound to a session, never copied, no ``.to`` (see session.py)."""

    def __init__(self, session: BCGSession):
        self.session = session

    def __deepcopy__(self, memo):
        return self


class DiffusionModelHook(_SessionHook):
    """WrappersMP.DIFFUSION_MODEL: ``(executor, *args, **kwargs)`` -> the DiT's output.

    Carries out :func:`.decision.decide`'s plan and decides nothing: replay (verified where the
    plan says), capture, or eager with the reason; a warm-up's plan is logged as a capture record."""

    def __call__(self, executor, *args, **kwargs):
        import comfy.model_management as mm

        if torch.compiler.is_compiling():
            # Dynamo is tracing this hook with the DiT (TorchCompileModel compiled the module the
            # hook sits in): the call goes through untouched, since anything BCG did here would
            # become dynamo guards or graph breaks; ApplyModelHook counts it from outside.
            return executor(*args, **kwargs)
        session = self.session
        if session.run is not None:
            session.run.hook_calls += 1
        # Eager ComfyUI notices an interrupt inside the forward (every Linear checks); a replay runs
        # no Python there, so check once per DiT call: a cancelled run stops at the next call.
        mm.throw_exception_if_processing_interrupted()
        try:
            plan = decide(session, executor, args, kwargs)
        except mm.InterruptProcessingException:
            raise
        except Exception as e:  # a prompt that runs without BCG runs with it: eager, the error named
            reason = Reason(reasons.UNCLASSIFIED, f"BCG could not decide on this call ({one_line(e)}): ran eager")
            log.error("[BCG] %s", reason, exc_info=session.runner.stats.eager[reason] == 0)  # traceback once
            return session.runner.run_eager(executor, args, kwargs, reason)
        runner, decision = session.runner, plan.decision
        if decision.action is Action.EAGER:
            if plan.warmup:  # a warm-up says why it captured nothing here
                label = session.adapter.label(plan.call) if plan.call else "DiT call"
                session.capture_log.append(CaptureRecord(label=label, status="skipped", reason=str(decision.reason)))
            return runner.run_eager(executor, () if plan.call else args, plan.received or kwargs, decision.reason)
        token = CALL_OPTIONS.set(dict(plan.call.get("transformer_options") or {}))
        # A caption the model's own code padded before the key: the rest of the forward runs on
        # the padded call, and eager answers and proofs run the call as received.
        forward, reference = executor, None
        if plan.text is not None:
            forward, reference = plan.text.forward(executor), Reference(executor, (), plan.received)
        try:
            if plan.warmup:
                return self._capture(executor, forward, reference, plan)
            out = runner.execute(
                decision, forward, (), plan.call, verify=plan.verify is Verify.EXACT,
                strategy=session.strategy, binding=session.run, reference=reference,
            )  # fmt: skip
            if plan.verify is Verify.MEASURE:  # fast's graphs differ from eager by design: measured, kept
                diff = outputs_equal(out, executor(**plan.received))[1]
                log.info("[BCG] verify %s: %s, max abs diff %g from eager", plan.dispatch.label, NOT_BIT_EXACT, diff)
            return out
        finally:
            CALL_OPTIONS.reset(token)

    def _capture(self, executor, forward, reference: Reference | None, plan: CallPlan):
        """Warm-up: capture this signature (the runner proves replay == eager before it serves)
        and return the eager output of this call."""
        session = self.session
        dispatch = plan.dispatch
        result = session.runner.capture(
            forward, (), plan.call, key_extra=dispatch.key_extra, opaque=dispatch.opaque, label=dispatch.label,
            variant=dispatch.variant, state=plan.state, strategy=session.strategy, binding=session.run,
            reference=reference,
        )  # fmt: skip
        record = CaptureRecord(
            label=result.label,
            status=result.status.value,
            reason=result.reason,
            exact=result.exact,
            max_abs_diff=result.max_abs_diff,
        )
        if session.config.mode is Mode.FAST and result.status is CaptureStatus.CAPTURED:
            # What fast mode costs in exactness, per shape: the captured (compiled) output against
            # the plain forward, as the strategy's accept check measured it.
            record.eager_diff = session.fast.last_difference.max_abs
            record.eager_relative = session.fast.last_difference.relative
        if result.entry is not None:
            record.segments, record.breaks = result.entry.segments, result.entry.breaks
            record.seconds = result.entry.capture_seconds if result.status is CaptureStatus.CAPTURED else 0.0
            record.pool_mib = session.runner.memory_bytes / 2**20
        session.capture_log.append(record)
        return result.output if result.output is not None else executor(**plan.received)


class ApplyModelHook(_SessionHook):
    """WrappersMP.APPLY_MODEL: counts, eager with the reason, each DiT call that a torch.compile'd
    forward ran with BCG's DIFFUSION_MODEL hook traced away.

    That hook sits inside the module TorchCompileModel compiles, so dynamo traces it with the DiT,
    and it then passes the call through untouched: bookkeeping there would become dynamo guards (a
    second compile and slower sampling: docs/benchmarks.md, "Figures the design rests on"), and a
    graph break would fail a fullgraph compile. This hook runs outside the compiled
    module, once per ``apply_model``; a call in which the inner hook did not run in Python was served
    by the compiled forward. It counts only in a compiled run, since outside one such a call is one
    a cache node (EasyCache) skipped; inside one, a skipped call counts as the compiled model's.
    """

    def __call__(self, executor, *args, **kwargs):
        session = self.session
        run = session.run
        if run is None or run.compiled is None:
            return executor(*args, **kwargs)
        import comfy.model_management as mm

        mm.throw_exception_if_processing_interrupted()  # the compiled forward checks for none
        seen = run.hook_calls
        out = executor(*args, **kwargs)
        if run.hook_calls == seen:
            session.runner.count_eager(
                Reason(reasons.COMPILED, f"disabled: {session.runner.disabled_reason or run.compiled}")
            )
        return out


class SamplerRunHook(_SessionHook):
    """WrappersMP.SAMPLER_SAMPLE: ``(executor, guider, sigmas, extra_args, ...)``."""

    def __call__(self, executor, guider, sigmas, extra_args, *args, **kwargs):
        session = self.session
        model_options = extra_args.get("model_options", {})
        _make_innermost(model_options)
        run = session.begin_run(guider.model_patcher, max(0, len(sigmas) - 1), model_options)
        window = session.runner.stats.window()
        try:
            return executor(guider, sigmas, extra_args, *args, **kwargs)
        finally:
            session.end_run(run)
            if not run.warming:
                notes = [*session.sample_notes, *sorted(run.notes)]
                report.publish_run(session, notes, *window.delta(), evicted=window.evictions())


def _make_innermost(model_options: dict) -> None:
    """Move BCG's DIFFUSION_MODEL wrapper last, i.e. innermost, for this run only.

    Wrapper order is key insertion order, and nodes applied after BCG Apply (EasyCache, ...) add
    theirs later, which would put them inside BCG; ``model_options`` here is this run's own copy.
    """
    from comfy.patcher_extension import WrappersMP

    chain = model_options.get("transformer_options", {}).get("wrappers", {}).get(WrappersMP.DIFFUSION_MODEL)
    if chain and BCG_KEY in chain and next(reversed(chain)) != BCG_KEY:
        chain[BCG_KEY] = chain.pop(BCG_KEY)


class PrepareSamplingHook(_SessionHook):
    """WrappersMP.PREPARE_SAMPLING: reserve graph memory while ComfyUI plans its loads."""

    def __call__(self, executor, *args, **kwargs):
        import comfy.model_management as mm

        reserve = self.session.runner.memory_bytes
        mm.EXTRA_RESERVED_VRAM += reserve
        try:
            return executor(*args, **kwargs)
        finally:
            mm.EXTRA_RESERVED_VRAM -= reserve


class _ForwardThroughBCG:
    """The DiT's ``forward``, for a model whose forward does not run ComfyUI's DIFFUSION_MODEL
    WrapperExecutor itself (no ``_forward``: SD3's ``MMDiT`` in 0.8.0 and 0.33.0). Installed on the
    clone as the object patch ``diffusion_model.forward``, it runs the class's own forward through
    BCG's DIFFUSION_MODEL hook and no other: stock ComfyUI runs no DIFFUSION_MODEL wrapper for such
    a model, so another node's wrapper (EasyCache, ...) stays as inactive as it is without BCG."""

    def __init__(self, diffusion_model: Any):
        self.diffusion_model = diffusion_model

    def __call__(self, *args, **kwargs):
        import types

        from comfy.patcher_extension import WrapperExecutor, WrappersMP, get_all_wrappers

        dm = self.diffusion_model
        options = bind_call(dm, args, kwargs).get("transformer_options") or {}
        ours = [w for w in get_all_wrappers(WrappersMP.DIFFUSION_MODEL, options) if isinstance(w, DiffusionModelHook)]
        forward = types.MethodType(type(dm).forward, dm)
        return WrapperExecutor.new_class_executor(forward, dm, ours).execute(*args, **kwargs)

    def __deepcopy__(self, memo):
        return self


def install(model_patcher: Any, adapter, config: BCGConfig, permanent_refusal: str | None) -> BCGSession:
    """Attach a new session's hooks to ``model_patcher`` (a clone the caller owns)."""
    from comfy.patcher_extension import WrappersMP

    diffusion_model = model_patcher.get_model_object("diffusion_model")
    session = BCGSession(
        adapter,
        config,
        permanent_refusal=permanent_refusal,
        stage_host_copies=guards.plain_subclass_weights(diffusion_model),
    )
    for wrapper_type in (
        WrappersMP.DIFFUSION_MODEL,
        WrappersMP.APPLY_MODEL,
        WrappersMP.SAMPLER_SAMPLE,
        WrappersMP.PREPARE_SAMPLING,
        WrappersMP.OUTER_SAMPLE,
    ):
        model_patcher.remove_wrappers_with_key(wrapper_type, BCG_KEY)
    # diffusion_model is this patcher's DiT: the model may be loaded under another clone, whose
    # object patches (a compile node's torch.compile'd module, say) are then in place.
    if not hasattr(type(diffusion_model), "_forward"):  # else its forward runs the DIFFUSION_MODEL wrappers itself
        model_patcher.add_object_patch("diffusion_model.forward", _ForwardThroughBCG(diffusion_model))
    model_patcher.add_wrapper_with_key(WrappersMP.DIFFUSION_MODEL, BCG_KEY, DiffusionModelHook(session))
    model_patcher.add_wrapper_with_key(WrappersMP.APPLY_MODEL, BCG_KEY, ApplyModelHook(session))
    model_patcher.add_wrapper_with_key(WrappersMP.SAMPLER_SAMPLE, BCG_KEY, SamplerRunHook(session))
    model_patcher.add_wrapper_with_key(WrappersMP.PREPARE_SAMPLING, BCG_KEY, PrepareSamplingHook(session))
    model_patcher.add_wrapper_with_key(WrappersMP.OUTER_SAMPLE, BCG_KEY, OuterSampleHook(session))
    if config.mode is Mode.BREAKABLE and permanent_refusal is None:
        options = model_patcher.model_options.setdefault("transformer_options", {})
        previous = options.get("optimized_attention_override")
        if isinstance(previous, BreakingAttention):  # BCG applied twice: keep the chain, not our old break
            previous = previous.previous
        session.attention = BreakingAttention(previous)
        options["optimized_attention_override"] = session.attention
    if config.mode is Mode.FAST and permanent_refusal is None:
        session.fast = RegionalCompile(
            diffusion_model, cudnn_attention=cudnn_attention_preferred(model_patcher.load_device)
        )
        session.strategy = session.fast.strategy()
    if permanent_refusal is None:
        not_inplace = guards.inplace_lora_refusal(model_patcher, diffusion_model)
        if not_inplace is None:
            # LoRA patches then write into the existing weight tensors: addresses (and graphs) stay valid.
            model_patcher.weight_inplace_update = True
        else:
            log.info("[BCG] LoRA stays out of place: %s; a LoRA change makes BCG capture again", not_inplace)
    return session


def session_of(model_patcher: Any) -> BCGSession | None:
    from comfy.patcher_extension import WrappersMP

    hooks = model_patcher.get_wrappers(WrappersMP.DIFFUSION_MODEL, BCG_KEY)
    return hooks[-1].session if hooks else None
