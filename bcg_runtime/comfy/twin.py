"""The model BCG samples with: a clone whose weights stay at fixed addresses.

Under Dynamic VRAM (ComfyUI's default on NVIDIA since 2026) a model's weights are faulted in and
evicted per forward, so no graph could hold their addresses. Like core's TorchCompileModel, BCG
then takes the model's classic (non-dynamic) twin: ComfyUI builds it once per model from the
loader's recipe (``get_non_dynamic_delegate`` caches it for later clones), and it loads fully on
the GPU like any model under ``--disable-dynamic-vram``. The original stays dynamic for every
other node of the workflow.

The twin is a new module tree, but ``clone`` copies the patcher's injections as they are, and an
injection is bound to the modules it was made for. Load LoRA (Bypass)'s injection hooks the
original model's layers: carried over unchanged, the twin would sample without the LoRA and the
original model, sampled by another branch, would get it. So each injection is made again for the
twin's modules where BCG knows how (bypass LoRA: its adapters and strengths are on its manager),
and a model carrying an injection BCG cannot remake gets no twin: it runs unchanged, with the
reason naming the injection.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)


def fixed_address_clone(model: Any) -> tuple[Any, str | None]:
    """A clone of ``model`` whose weights stay at fixed addresses, and a refusal when there can be
    none (the clone returned then is a plain one, which BCG leaves to run eager)."""
    is_dynamic = getattr(model, "is_dynamic", None)
    if not (callable(is_dynamic) and is_dynamic()):
        return model.clone(), None
    try:
        delegate = getattr(model, "get_non_dynamic_delegate", None)
        static = delegate() if callable(delegate) else model.clone(disable_dynamic=True)
    except Exception as e:  # e.g. a custom loader registered no recipe (cached_patcher_init)
        reason = (
            f"Dynamic VRAM: ComfyUI could not make a fixed-address copy of this model ({type(e).__name__}: {e}); "
            "load it with a core loader, or start ComfyUI with --disable-dynamic-vram (or --highvram); the model runs unchanged"
        )
        return model.clone(), reason
    refusal = remake_injections(static, model)
    if refusal:
        return model.clone(), refusal
    log.info("[BCG] Dynamic VRAM: BCG uses this model's fixed-address twin (loaded fully on the GPU while sampling)")
    return static, None


def remake_injections(twin: Any, original: Any) -> str | None:
    """Make every injection of ``twin`` (copied from ``original`` by ``clone``) again for the twin's
    own modules; a refusal naming the first one that cannot be remade, else None."""
    if twin.model is original.model:
        return None  # same modules: the injections are already bound to them
    for key, injections in list(getattr(twin, "injections", {}).items()):
        remade = []
        for injection in injections:
            manager = _bypass_manager(injection)
            if manager is None:
                return (
                    f"Dynamic VRAM: the model carries the injection {key!r}, bound to the dynamic model's layers, which BCG "
                    "cannot remake for its fixed-address copy; the model runs unchanged (start ComfyUI with "
                    "--disable-dynamic-vram for BCG to serve it)"
                )
            remade += _remake_bypass(manager, twin.model)
        twin.set_injections(key, remade)
    return None


def _bypass_manager(injection: Any) -> Any:
    """The ``BypassInjectionManager`` whose ``create_injections`` made ``injection``, else None.

    The manager is the closure of the injection's ``inject`` function (ComfyUI keeps no other
    reference to it); anything else is an injection BCG does not know."""
    try:
        from comfy.weight_adapter.bypass import BypassInjectionManager
    except ImportError:  # a ComfyUI without bypass LoRA
        return None
    for cell in getattr(getattr(injection, "inject", None), "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if type(value) is BypassInjectionManager:
            return value
    return None


def _remake_bypass(manager: Any, model: Any) -> list:
    twin_manager = type(manager)()
    for key, (adapter, strength) in manager.adapters.items():
        twin_manager.add_adapter(key, adapter, strength=strength)
    return twin_manager.create_injections(model)
