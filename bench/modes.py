"""The benchmark's modes: eager, BCG's modes, torch.compile, and the tools a mode may stack in
front of it (an attention backend, a step cache, TorchCompileModel before BCG Apply), each applied
the way its ComfyUI node or launch flag would; which mode's output another's must equal."""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Container, Iterator

from .report import size_text

MODES = ("eager", "bcg", "bcg-full", "fast", "bcg-eager", "compile-cudagraphs", "compile-inductor")

#: Attention backends a mode may stack in front of it (``sage+bcg-full``) -> ComfyUI's registered
#: attention function, put where its launch flag would (``--use-sage-attention``,
#: ``--use-flash-attention``, ``--use-ck-attention`` = comfy-kitchen's int8 attention); ``cudnn``
#: keeps ComfyUI's PyTorch attention and puts cuDNN first in SDPA's backend order (mode fast does
#: that itself on Hopper and newer, so there ``cudnn+fast`` is ``fast``).
ATTENTION_STACK = {"sage": "sage", "flash": "flash", "ck": "comfy_kitchen_int8", "cudnn": None, "sagekj": None}

#: Attention backends a node pack puts on the model itself (its ``optimized_attention_override``),
#: not a launch flag -> (pack, node): ``sagekj`` is KJNodes' Patch Sage Attention KJ in mode ``auto``,
#: the per-model Sage that BCG breaks around (``sagekj+bcg-full``).
ATTENTION_NODES = {"sagekj": ("ComfyUI-KJNodes", "PathchSageAttentionKJ")}

#: Step caches a mode may stack in front of it (``easycache+bcg-full``): core's nodes with their
#: defaults, applied to the model before the mode (BCG Apply after the cache node).
CACHE_STACK = ("easycache", "lazycache")

#: ComfyUI's TorchCompileModel stacked in front of a BCG mode (``compile-inductor+bcg-full``: the
#: workflow TorchCompileModel -> BCG Apply): BCG steps aside with the reason, so the row measures
#: what BCG costs there and must equal the compile mode alone.
COMPILE_STACK = ("compile-inductor", "compile-cudagraphs")

#: Bench mode -> BCG Apply mode.
BCG_MODES = {"bcg": "breakable", "bcg-full": "full", "fast": "fast"}

#: BCG Apply with capture 'warm-up only' and no warm-up: every DiT call passes BCG's hook and
#: decision and runs eager (reason: not captured). What BCG costs where nothing replays; its
#: output must equal eager's.
EAGER_UNDER_BCG = "bcg-eager"


def split_mode(mode: str) -> tuple[tuple[str, ...], str]:
    """``"sage+easycache+bcg-full"`` -> ``(("sage", "easycache"), "bcg-full")``; ``"sage"`` ->
    ``(("sage",), "eager")``; ``"bcg"`` -> ``((), "bcg")``: the stacked tools (at most one attention
    backend and one cache, in any order, and before a BCG mode one compile mode) and the base mode.
    SystemExit naming the field otherwise."""
    *stack, last = mode.split("+")
    if last in ATTENTION_STACK or last in CACHE_STACK:
        stack, last = [*stack, last], "eager"
    kinds = [
        next((kind for kind in (ATTENTION_STACK, CACHE_STACK, COMPILE_STACK) if tool in kind), None) for tool in stack
    ]
    compiled_without_bcg = COMPILE_STACK in kinds and last not in BCG_MODES
    if last not in MODES or None in kinds or len(set(map(id, kinds))) != len(kinds) or compiled_without_bcg:
        tools = ", ".join((*ATTENTION_STACK, *CACHE_STACK))
        raise SystemExit(
            f"--modes: unknown mode '{mode}'; accepted: {', '.join(MODES)}, each after at most one attention "
            f"backend and one step cache ({tools}), e.g. sage+bcg-full, easycache+fast, sage alone; "
            f"a BCG mode also after one of {', '.join(COMPILE_STACK)} (compile-inductor+bcg-full)"
        )
    return tuple(stack), last


def with_cache(model: Any, name: str) -> Any:
    """``model`` through core's EasyCache / LazyCache node with its defaults."""
    from comfy_extras import nodes_easycache

    node = {"easycache": nodes_easycache.EasyCacheNode, "lazycache": nodes_easycache.LazyCacheNode}[name]
    (cached,) = node.execute(model, reuse_threshold=0.2, start_percent=0.15, end_percent=0.95, verbose=False).args
    return cached


def with_attention_node(model: Any, name: str) -> Any:
    """``model`` through the pack node :data:`ATTENTION_NODES` names (the pack loaded by ComfyUI's
    own custom-node loader, ``bench.packs``)."""
    from . import packs

    pack, node = ATTENTION_NODES[name]
    (patched,) = packs.load(pack)[node]().patch(model, "auto")
    return patched


def with_torch_compile(model: Any, mode: str) -> Any:
    """A clone of ``model`` through core's TorchCompileModel helper with ``mode``'s backend."""
    from comfy_api.torch_helpers import set_torch_compile_wrapper

    compiled = model.clone()
    set_torch_compile_wrapper(model=compiled, backend=mode.split("-", 1)[1])
    return compiled


@contextlib.contextmanager
def attention_backend(name: str | None) -> Iterator[None]:
    """The stacked attention backend ``name`` for the duration (None: unchanged): ``cudnn`` puts
    cuDNN first in SDPA's backend order (``api.cudnn_first``); any other name is a registered
    ComfyUI attention function (:data:`ATTENTION_STACK`'s value, or the name itself: ``split``),
    bound in every model module as its launch flag would have bound it at import.

    The model modules copy ``optimized_attention`` when imported, so each copy is replaced (the ones
    equal to the default, which is what the flag changes) and restored after."""
    if name is None or name in ATTENTION_NODES:
        yield
        return
    if name == "cudnn":
        from bcg_runtime.comfy import api

        with api.cudnn_first():
            yield
        return
    import comfy.ldm.modules.attention as attention

    try:
        chosen = attention.get_attention_function(ATTENTION_STACK.get(name) or name)
    except KeyError:
        chosen = None
    if chosen is None:
        raise RuntimeError(
            f"attention '{name}' is not available in this ComfyUI (install its package: pip install sageattention / flash-attn; ck needs comfy-kitchen's CUDA int8 attention)"
        )
    default = attention.optimized_attention
    swapped = [
        (module, attr)
        for module_name, module in list(sys.modules.items())
        if module_name.startswith("comfy.ldm.") and module is not None
        for attr in ("optimized_attention", "optimized_attention_masked")
        if getattr(module, attr, None) is default
    ]
    for module, attr in swapped:
        setattr(module, attr, chosen)
    try:
        yield
    finally:
        for module, attr in swapped:
            setattr(module, attr, default)


@contextlib.contextmanager
def stacked(mode: str, model: Any) -> Iterator[tuple[Any, str]]:
    """``(model, base mode)`` for ``mode`` (:func:`split_mode`): a stacked cache, a pack's attention
    node, then a stacked TorchCompileModel, applied to the model the mode starts from (the node order cache ->
    TorchCompileModel -> BCG Apply), a stacked attention backend in place for the duration."""
    stack, base = split_mode(mode)
    for cache in (tool for tool in stack if tool in CACHE_STACK):
        model = with_cache(model, cache)
    for node in (tool for tool in stack if tool in ATTENTION_NODES):
        model = with_attention_node(model, node)
    for compiler in (tool for tool in stack if tool in COMPILE_STACK):
        model = with_torch_compile(model, compiler)
    with attention_backend(next((tool for tool in stack if tool in ATTENTION_STACK), None)):
        yield model, base


def prepare_mode(mode: str, model, family, res, positive, negative) -> tuple[Any, float, Any]:
    """(model to sample, first-run seconds, session or None) for one mode."""
    from bcg_runtime.comfy import api

    if mode == "eager":
        return model, 0.0, None
    if mode == EAGER_UNDER_BCG:
        m = api.apply(model, "breakable", capture=api.CapturePolicy.WARMUP_ONLY.value)
        return m, 0.0, api.session_of(m)
    if mode in BCG_MODES:
        m = api.apply(model, BCG_MODES[mode])
        report = api.warm_up(m, size_text(res), "", "1", positive, negative)
        if report.refusal and report.refusal != api.compile_refusal(m):
            raise RuntimeError(report.refusal)
        # Under a stacked TorchCompileModel BCG steps aside by design: the warm run compiles, as alone.
        return m, (-1.0 if report.refusal else report.seconds), api.session_of(m)
    if mode in COMPILE_STACK:
        return with_torch_compile(model, mode), -1.0, None  # first-run seconds measured by the warm run
    raise ValueError(f"--modes: unknown mode '{mode}'; accepted: {', '.join(MODES)}")


def without_bcg(mode: str) -> str | None:
    """The mode that is ``mode`` minus an exact BCG mode (``sage+bcg-full`` -> ``sage``,
    ``bcg`` -> ``eager``): what its output must equal bit for bit. None for the others (fast is
    not exact by design; compile modes have no BCG)."""
    stack, base = split_mode(mode)
    if base not in ("bcg", "bcg-full", EAGER_UNDER_BCG):
        return None
    return "+".join(stack) or "eager"


def reference_mode(mode: str, measured: Container[str]) -> str | None:
    """The measured mode whose output ``mode``'s must equal bit for bit: ``mode`` itself when it
    was measured before (listed again: is the tool reproducible?), else :func:`without_bcg`'s."""
    if mode in measured:
        return mode
    without = without_bcg(mode)
    return without if without in measured else None


def split_warmup_plan(plan: str) -> tuple[str, str]:
    """``"512x512,1024x1024:128,256"`` -> ``("512x512,1024x1024", "128,256")``; SystemExit naming
    ``--warmup-cost`` otherwise (BCG Apply's parser checks each part when the warm-up runs)."""
    resolutions, _, buckets = plan.partition(":")
    if not resolutions.strip() or not buckets.strip():
        raise SystemExit(f"--warmup-cost: '{plan}' is not RESOLUTIONS:TEXT_BUCKETS (e.g. 512x512,1024x1024:128,256)")
    return resolutions, buckets


def warmup_cost(model, mode: str, plan: str) -> dict:
    """Seconds and graphs of one BCG Apply warm-up of ``plan`` (``RESOLUTIONS:TEXT_BUCKETS``) in
    ``mode`` (a BCG bench mode, optionally stacked) on a fresh BCG model; the graphs go after."""
    resolutions, buckets = split_warmup_plan(plan)
    import torch

    from bcg_runtime.comfy import api

    torch._dynamo.reset()  # mode fast compiles from scratch, as in a fresh process
    with stacked(mode, model) as (model, base):
        m = api.apply(model, BCG_MODES[base])
        report = api.warm_up(m, resolutions, buckets, "1")
    api.session_of(m).runner.reset()
    torch._dynamo.reset()
    if report.refusal:
        raise RuntimeError(report.refusal)
    return {
        "mode": mode,
        "plan": plan,
        "seconds": round(report.seconds, 1),
        "captured": report.captured,
        "report": report.text(),
    }
