"""The two operations behind the nodes, usable from scripts, the benchmark and tests alike.

``apply`` clones a ComfyUI model and attaches a BCG session; ``warm_up`` parses a warm-up plan
and captures it. The V3 nodes in ``nodes/`` are thin shells over these and import nothing else
of the runtime: what they show (the modes, the capture policies), check (``resolutions_error``),
re-run on (``invalidations``), report (``publish_input_error``) and serve (``register_routes``)
comes from here too. The tools (``bench``) reach the glue through here as well: a model's session
(``session_of``), why BCG steps aside for a stacked TorchCompileModel (``compile_refusal``), the
cuDNN-first SDPA order fast mode uses (``cudnn_first``), a DiT call's arguments named as BCG's
hook names them (``bind_call``) and the compiler-policy variable (``COMPILER_POLICY_VAR``).
"""

from __future__ import annotations

import logging
import os
from typing import Any, Callable

from ..errors import InputError
from ..plan import PlanError, parse_plan, parse_sizes
from . import compiler, guards
from .compiler import POLICY_VAR as COMPILER_POLICY_VAR
from .config import BCGConfig, CapturePolicy, Mode
from .decision import bind_call
from .events import publish_input_error
from .fast import is_quantized_layer, opaque_to_dynamo, repeated_block_lists, skip_transformer_options
from .guards import compile_refusal
from .hooks import install, session_of
from .models import SUPPORTED, UNSUPPORTED, adapter_for, config_class_name
from .routes import register_routes
from .sdpa_order import cudnn_first
from .session import BCGSession, invalidations
from .twin import fixed_address_clone
from .warmup import WarmupReport, per_step_refusal, run_warmup

log = logging.getLogger(__name__)

__all__ = [
    "COMPILER_POLICY_VAR", "UNVERIFIED_OPT_IN", "CapturePolicy", "InputError", "Mode", "apply",
    "bind_call", "compile_refusal", "cudnn_first", "invalidations", "publish_input_error", "register_routes",
    "resolutions_error", "session_of", "warm_up",
    # how mode fast compiles a DiT's blocks, for the tools that study compiling them otherwise
    "is_quantized_layer", "opaque_to_dynamo", "repeated_block_lists", "skip_transformer_options",
]  # fmt: skip

#: Environment variable that lets families not yet verified on a GPU use graphs.
UNVERIFIED_OPT_IN = "BCG_UNVERIFIED_FAMILIES"
#: Longest text bucket accepted before the model is known.
ANY_MODEL_MAX_TEXT = 4096


def apply(
    model: Any,
    mode: str = "auto",
    memory_budget_mb: int = 0,
    verify: bool = False,
    node_id: str | None = None,
    capture: str = CapturePolicy.ON_FIRST_CALL.value,
) -> Any:
    """A clone of ``model`` whose DiT calls replay captured graphs; unchanged where BCG cannot run.

    ``capture``: a :class:`CapturePolicy` value ('on first call' or 'warm-up only')."""
    compiler.policy()  # a bad BCG_COMFY_COMPILER is this node's error, not a sampling run's
    try:
        chosen = Mode(mode)
    except ValueError:
        raise InputError(f"mode: '{mode}' is not a BCG mode; accepted: {', '.join(x.value for x in Mode)}") from None
    try:
        policy = CapturePolicy(capture)
    except ValueError:
        raise InputError(
            f"capture: '{capture}' is not a capture policy; accepted: {', '.join(repr(p.value) for p in CapturePolicy)}"
        ) from None
    adapter = adapter_for(model)
    config = BCGConfig(
        mode=chosen, memory_budget_mb=int(memory_budget_mb), verify=bool(verify), capture=policy
    ).for_adapter(adapter)
    mode_refusal = adapter.mode_refusal(config.mode) if adapter is not None else None
    if mode_refusal:
        raise InputError(mode_refusal)
    process_refusal = guards.process_refusal()
    refusal = serving_refusal(model, adapter, policy) or process_refusal or guards.device_refusal(model)
    if refusal:
        # BCG will serve nothing here, so it takes no fixed-address twin either: under Dynamic VRAM
        # that twin is a second, fully loaded copy of the model, which sampled slower than ComfyUI's
        # own where nothing replays (docs/benchmarks.md, MiniMax H3 on a stock server).
        m = model.clone()
    else:
        m, refusal = fixed_address_clone(model)
    session = install(m, adapter, config, refusal)
    if node_id is not None:
        session.node_ids.add(str(node_id))
    if refusal and refusal != process_refusal:
        log.warning("[BCG] off for %s: %s", adapter.display_name if adapter else "this model", refusal)
    elif refusal:  # said once at start-up (startup.py); the badge and the run summary say it too
        log.debug("[BCG] off: %s", refusal)
    return m


def serving_refusal(model: Any, adapter: Any, policy: CapturePolicy) -> str | None:
    """Why BCG Apply serves nothing for this model whatever the process: no adapter for its class,
    a family not proven on the GPU (unless opted in), a fact of this very model the family cannot
    serve (``adapter.model_refusal``), or a capture policy under which nothing could ever replay
    (:func:`warmup_only_refusal`); else None."""
    if adapter is None:
        name = config_class_name(model)
        why = f" ({UNSUPPORTED[name]})" if name in UNSUPPORTED else ""
        return f"unsupported model {name}{why}: BCG supports {SUPPORTED}; the model runs unchanged"
    if not adapter.gpu_verified and os.environ.get(UNVERIFIED_OPT_IN) != "1":
        why = adapter.opt_in_reason or f"{adapter.display_name} support awaits its GPU exactness test"
        return (
            f"{why}: the model runs unchanged "
            f"(set {UNVERIFIED_OPT_IN}=1 to try it; every graph is still proven bit-equal to eager before it serves)"
        )
    return adapter.model_refusal() or warmup_only_refusal(adapter, policy)


def warmup_only_refusal(adapter: Any, policy: CapturePolicy) -> str | None:
    """Why BCG stays off for a model whose graphs only a warm-up would capture but no warm-up can
    (capture 'warm-up only' on a family keyed on its sampling step, ``per_step_refusal``), else None."""
    if policy is not CapturePolicy.WARMUP_ONLY or per_step_refusal(adapter) is None:
        return None
    return (
        f"capture 'warm-up only' captures nothing for {adapter.display_name} (each graph is keyed on its sampling "
        "step, which a warm-up cannot know), so BCG leaves the model unchanged; use capture 'on first call' to "
        "capture a schedule's steps on its second run"
    )


def require_session(model: Any) -> BCGSession:
    session = session_of(model)
    if session is None:
        raise InputError(
            "model: no BCG Apply on this model; connect BCG Apply between the model loader and BCG Warmup Capture"
        )
    return session


def warm_up(
    model: Any,
    resolutions: str,
    text_buckets: str = "",
    batch_sizes: str = "1,2",
    positive: Any = None,
    negative: Any = None,
    node_id: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    latent: dict | None = None,
) -> WarmupReport:
    """Parse the plan (errors name the field) and capture it for ``model`` (a BCG Apply output).

    ``latent``: the workflow's LATENT; with ``positive`` its exact sampling calls are captured and
    ``resolutions`` may be empty."""
    session = require_session(model)
    if not text_buckets.strip() and positive is None:
        raise InputError(
            "text_buckets: empty and no conditioning connected; give buckets (e.g. 256) or connect positive"
        )
    samples = None
    if latent is not None:
        samples = latent.get("samples") if isinstance(latent, dict) else None
        if samples is None or not hasattr(samples, "shape") or samples.dim() < 4:
            raise InputError(
                "latent: not a LATENT with 'samples' of shape [batch, channels, (frames,) height, width]; connect the latent node that feeds the KSampler"
            )
        if positive is None:
            raise InputError(
                "latent: connected without positive; connect the workflow's conditioning too, so its calls can be built"
            )
    adapter = session.adapter
    # A per-step family's warm-up captures nothing (its report says why): its frame counts, on
    # another grid than temporal_scale's 4k+1 (MiniMax H3: 17k+5), are not judged first.
    judged = adapter if adapter and not per_step_refusal(adapter) else None
    plan = parse_plan(
        resolutions, text_buckets if text_buckets.strip() else None, batch_sizes,
        adapter.max_text_length if adapter else ANY_MODEL_MAX_TEXT, resolutions_optional=samples is not None,
        model=judged.display_name if judged else None, temporal_scale=judged.temporal_scale if judged else None,
    )  # fmt: skip
    if node_id is not None:
        session.node_ids.add(str(node_id))
    return run_warmup(model, session, plan, positive, negative, progress=progress, latent=samples)


def resolutions_error(resolutions: str) -> str | None:
    """Why the warm-up's ``resolutions`` text cannot be used (its syntax, sizes on the 8-pixel
    grid), or None; empty text is allowed (a connected latent gives the size). What depends on the
    model (frame counts) is judged by :func:`warm_up`."""
    if not resolutions.strip():
        return None
    try:
        parse_sizes(resolutions)
    except PlanError as e:
        return str(e)
    return None
