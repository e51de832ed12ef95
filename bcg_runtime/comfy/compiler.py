"""ComfyUI's model compiler and BCG: the compiler steps aside while BCG's own model samples.

The compiler (ComfyUI 0.34+, ``comfy/model_prefetch.py`` on comfy-aimdo 0.6's
``comfy_aimdo.malloc_graph``; docs/compatibility.md) records the allocations of a forward in an
aimdo *malloc graph* so that the next forward gets the same addresses: a DiT that opts in calls
``malloc_graph_begin(device)`` around its block loop, ``prefetch_queue_pop(...,
malloc_scope="block")`` per block and ``malloc_graph_end()``; with ``enable_graph`` it also
captures per-block CUDA graphs (autoregressive decoders only). It is on whenever Dynamic VRAM is
(``malloc_graph_enabled(device)``: no ``--disable-comfy-compiler``, aimdo enabled, a CUDA device),
a process switch read at every ``malloc_graph_begin``; there is no per-model switch.

BCG replays its own graphs of the whole forward, so a replay skips every Python call the DiT
makes into the compiler, and a capture runs them once inside BCG's capture. What that does to the
compiler's recording depends on aimdo internals that no release note describes. Two choices
(:data:`POLICY_VAR` picks one per process):

- ``aside`` (default): an OUTER_SAMPLE wrapper on BCG's clone sets
  ``args.disable_comfy_compiler`` for the length of that model's sampling run, as
  ``--disable-comfy-compiler`` does for a whole process, and restores it in ``finally``; the
  OUTER_SAMPLE wrapper is the outermost point of a sampling run, before any DiT (MiniMax H3 opens
  its malloc graph before the DIFFUSION_MODEL wrappers run) and before ComfyUI loads the model.
  The run's log line and summary say so once. Every other model (text encoders, other samplers'
  models) keeps the compiler. A process started with ``--disable-comfy-compiler`` is left alone.
- ``inside``: the compiler stays on around BCG's replays. Under PyTorch's native allocator (which
  BCG needs and the pack's prestartup selects) the malloc graph intercepts no allocation, so it
  can neither see nor move BCG's private pool; the GPU suite measures it
  (``python -m bench.compiler``).

Where ComfyUI already runs a module of the DiT as a CUDA graph, BCG does not graph a graph
(``fingerprint``: a module carrying ``_comfy_graph``; ``decision``: a call made while another
capture is under way), with a reason of kind ``core_graph``; ``aside`` also keeps those per-block
graphs off for BCG's model.

On ComfyUI without the compiler (0.8.0, 0.33.0) everything here is inert: the wrapper passes the
call through, logs nothing and touches no flag.
"""

from __future__ import annotations

import enum
import logging
import os
import sys
from typing import Any, Callable

log = logging.getLogger(__name__)

#: ``aside`` (default) or ``inside``: what BCG does with the Comfy model compiler for its model.
POLICY_VAR = "BCG_COMFY_COMPILER"


class Policy(enum.Enum):
    """What BCG does with the Comfy model compiler while its model samples."""

    ASIDE = "aside"  # the compiler is off for BCG's model (BCG replays its own graphs)
    INSIDE = "inside"  # the compiler stays on; BCG's graphs run inside it


ASIDE, INSIDE = Policy.ASIDE, Policy.INSIDE
#: The flag of ComfyUI's ``comfy/cli_args.py`` (0.34+) that turns the compiler off.
FLAG = "disable_comfy_compiler"
#: What a run's summary says when BCG stepped the compiler aside.
ASIDE_NOTE = "Comfy model compiler off for this model's sampling (BCG replays its own graphs; set BCG_COMFY_COMPILER=inside to keep it)"


def policy(environ=os.environ) -> Policy:
    """The process's policy from :data:`POLICY_VAR`; an unknown value is one clear error naming it."""
    value = str(environ.get(POLICY_VAR, "") or ASIDE.value).strip().lower()
    try:
        return Policy(value)
    except ValueError:
        accepted = ", ".join(p.value for p in Policy)
        raise ValueError(
            f"{POLICY_VAR}: '{value}' is not a policy; accepted: {accepted} (default {ASIDE.value})"
        ) from None


def _policy_or_default() -> Policy:
    """:func:`policy`, or the default where the variable went bad after BCG Apply checked it."""
    try:
        return policy()
    except ValueError:
        return ASIDE


def _host_switch() -> tuple[Callable[[Any], bool] | None, Any]:
    """``(malloc_graph_enabled, args)`` of the running ComfyUI, or ``(None, None)`` where it has
    no compiler (no ``comfy.model_prefetch.malloc_graph_enabled`` or no ``--disable-comfy-compiler``
    flag). Imports ``comfy.model_prefetch`` only where ComfyUI is already imported."""
    if "comfy.cli_args" not in sys.modules:
        return None, None
    args = getattr(sys.modules["comfy.cli_args"], "args", None)
    if args is None or not hasattr(args, FLAG):
        return None, None
    try:
        import comfy.model_prefetch as prefetch
    except Exception:  # 0.8.0 has no model_prefetch; a broken one is not ours to report
        return None, None
    enabled = getattr(prefetch, "malloc_graph_enabled", None)
    return (enabled, args) if callable(enabled) else (None, None)


def compiler_active(device: Any) -> bool:
    """Whether the running ComfyUI's model compiler is on for ``device`` now."""
    enabled, _ = _host_switch()
    if enabled is None:
        return False
    try:
        return bool(enabled(device))
    except Exception:  # a compiler we cannot ask is one we do not touch
        return False


class CompilerAside:
    """Sets ``args.disable_comfy_compiler`` while ``run()`` runs, where the compiler is on for the
    device; restores it afterwards, also when the run raises. ``enabled`` and ``args``: the host's
    ``malloc_graph_enabled`` and ``comfy.cli_args.args`` (:func:`_host_switch`).

    Returns, from :meth:`__call__`, whether it stepped the compiler aside. Nested or concurrent
    uses restore in order: the one that set the flag is the one that clears it."""

    def __init__(self, enabled: Callable[[Any], bool], args: Any):
        self.enabled = enabled
        self.args = args

    def applies(self, device: Any) -> bool:
        if getattr(self.args, FLAG, True):  # --disable-comfy-compiler, or already aside
            return False
        try:
            return bool(self.enabled(device))
        except Exception:
            return False

    def run(self, device: Any, run: Callable[[], Any]) -> tuple[Any, bool]:
        if not self.applies(device):
            return run(), False
        setattr(self.args, FLAG, True)
        try:
            return run(), True
        finally:
            setattr(self.args, FLAG, False)


class OuterSampleHook:
    """WrappersMP.OUTER_SAMPLE on BCG's clone: steps the compiler aside for the run (policy
    ``aside``) and records that in the session, whose run summary then says so. Passes the call
    through unchanged where BCG cannot serve this model, under policy ``inside``, and on a
    ComfyUI without the compiler."""

    def __init__(self, session: Any):
        self.session = session

    def __deepcopy__(self, memo):
        return self

    def __call__(self, executor, *args, **kwargs):
        session = self.session
        enabled, host_args = _host_switch()
        if enabled is None or session.permanent_refusal is not None or _policy_or_default() is not ASIDE:
            return executor(*args, **kwargs)
        device = getattr(getattr(executor.class_obj, "model_patcher", None), "load_device", None)
        aside = CompilerAside(enabled, host_args)
        if not aside.applies(device):
            return executor(*args, **kwargs)
        log.info("[BCG] %s", ASIDE_NOTE)
        session.sample_notes.append(ASIDE_NOTE)
        try:
            out, _ = aside.run(device, lambda: executor(*args, **kwargs))
        finally:
            if ASIDE_NOTE in session.sample_notes:
                session.sample_notes.remove(ASIDE_NOTE)
        return out
