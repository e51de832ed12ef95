"""Turn PyTorch's cudaMallocAsync allocator off before torch is imported.

ComfyUI sets ``PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync`` on NVIDIA GPUs by default
(``cuda_malloc.py``, imported by ``main.py`` before the custom nodes' prestartup scripts run).
CUDA graphs are unsafe under that allocator: ``pool=`` is ignored, ``torch.cuda.MemPool`` raises,
and a failed capture aborts the process. PyTorch picks its allocator once, when torch is loaded,
from the first of its allocator variables that is set (torch 2.11 and 2.14 read
``PYTORCH_CUDA_ALLOC_CONF``, then on ROCm ``PYTORCH_HIP_ALLOC_CONF``, then ``PYTORCH_ALLOC_CONF``;
the order has changed between releases). So the pack's ``prestartup_script.py`` removes the
``backend:cudaMallocAsync`` entry from all three before ComfyUI imports torch: the same process
then runs PyTorch's native allocator, as ``--disable-cuda-malloc`` would give.

Parsing follows c10's ``ConfigTokenizer`` (``c10/core/AllocatorConfig.h``): entries are
separated by commas, list values sit in ``[...]``, every ASCII whitespace character is dropped
(also inside a word: ``back end`` reads as ``backend``) and names are case sensitive
(``backend:CudaMallocAsync`` is not the async backend; torch rejects it). Only the entries that
torch reads as ``backend:cudaMallocAsync`` are removed; every other entry keeps its text.

Standard library only (``logging``): ComfyUI runs the prestartup script before torch is imported,
and the script loads this file by its path, not as part of the package.
"""

import logging

#: The variables PyTorch reads its allocator settings from (all three are cleaned).
ALLOC_CONF_VARS = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF")
#: Set to 1 to keep cudaMallocAsync (BCG then leaves every model unchanged).
OPT_OUT_VAR = "BCG_KEEP_CUDA_MALLOC_ASYNC"
ASYNC_ENTRY = "backend:cudaMallocAsync"
LOGGER_NAME = "bcg_runtime.allocator_env"

# std::isspace in the C locale, which is what c10's tokenizer drops.
_C_SPACE = " \t\n\v\f\r"
_FALSE_WORDS = ("", "0", "false", "no", "off")


def _squeeze(text: str) -> str:
    return "".join(ch for ch in text if ch not in _C_SPACE)


def _entries(value: str) -> list[str]:
    """Split at the commas that separate entries (commas inside ``[...]`` belong to a list)."""
    entries, depth, start = [], 0, 0
    for i, ch in enumerate(value):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            entries.append(value[start:i])
            start = i + 1
    entries.append(value[start:])
    return entries


def is_async_entry(entry: str) -> bool:
    """Whether torch reads this ``key:value`` entry as ``backend:cudaMallocAsync``."""
    return _squeeze(entry) == ASYNC_ENTRY


def selects_cuda_malloc_async(value: str | None) -> bool:
    """Whether an allocator config string holds a ``backend:cudaMallocAsync`` entry."""
    return value is not None and any(is_async_entry(e) for e in _entries(value))


def without_cuda_malloc_async(value: str) -> str:
    """``value`` with its ``backend:cudaMallocAsync`` entries removed; "" when nothing is left.

    The other entries keep their text (less surrounding whitespace, which torch ignores) and order.
    Empty entries (what ComfyUI leaves when it appends ``,backend:cudaMallocAsync`` to an empty or
    comma-terminated value) are dropped too: they hold no option, and torch rejects ``a:b,,c:d``.
    """
    kept = [e.strip(_C_SPACE) for e in _entries(value) if not is_async_entry(e) and _squeeze(e)]
    return ",".join(kept)


def opted_out(environ) -> bool:
    """Whether ``BCG_KEEP_CUDA_MALLOC_ASYNC`` asks to keep cudaMallocAsync (any value but
    empty, 0, false, no, off)."""
    return str(environ.get(OPT_OUT_VAR, "")).strip().lower() not in _FALSE_WORDS


def async_vars(environ) -> list[str]:
    """The allocator variables of ``environ`` that select cudaMallocAsync, in torch's order."""
    return [name for name in ALLOC_CONF_VARS if selects_cuda_malloc_async(environ.get(name))]


def strip_cuda_malloc_async(environ) -> list[str]:
    """Remove ``backend:cudaMallocAsync`` from every allocator variable of ``environ`` (a mutable
    mapping such as ``os.environ``) and return the names of the variables it changed.

    A variable left empty is deleted, which is exactly the state ``--disable-cuda-malloc`` gives
    (ComfyUI then never sets it). Nothing changes when ``BCG_KEEP_CUDA_MALLOC_ASYNC`` is set.
    """
    if opted_out(environ):
        return []
    changed = []
    for name in async_vars(environ):
        value = without_cuda_malloc_async(environ[name])
        if value:
            environ[name] = value
        else:
            del environ[name]
        changed.append(name)
    return changed


def sync_comfy_args(modules) -> bool:
    """Tell an already imported ComfyUI that cudaMallocAsync is off, as ``--disable-cuda-malloc``
    does (ComfyUI 0.33's ``comfy/ops.py`` reads ``args.cuda_malloc`` when it picks how to stream
    offloaded weights). Looks ``comfy.cli_args`` up in ``modules`` and imports nothing. Returns
    whether it changed ``args``."""
    cli_args = modules.get("comfy.cli_args")
    args = getattr(cli_args, "args", None)
    if args is None or not getattr(args, "cuda_malloc", False):
        return False
    args.cuda_malloc = False
    if hasattr(args, "disable_cuda_malloc"):
        args.disable_cuda_malloc = True
    return True


def runs_on_cpu(modules) -> bool:
    """Whether an already imported ComfyUI was started with ``--cpu`` (``comfy.cli_args.args.cpu``;
    looked up in ``modules``, nothing imported): no model then touches CUDA, BCG cannot run, and
    the pack's start-up line says so, so the allocator needs no line of its own."""
    args = getattr(modules.get("comfy.cli_args"), "args", None)
    return bool(getattr(args, "cpu", False))


def _describe(before: dict, environ) -> str:
    parts = []
    for name, old in before.items():
        new = environ.get(name)
        parts.append(f"{name} {old!r} -> " + (repr(new) if new is not None else "unset"))
    return "; ".join(parts)


def prestartup(environ, modules, log=None) -> list[str]:
    """What ``prestartup_script.py`` does; returns the names of the variables it changed.

    Logs one ``[BCG]`` line when it switches the allocator, when ``BCG_KEEP_CUDA_MALLOC_ASYNC``
    keeps cudaMallocAsync, or when torch was imported too early to switch it. Silent (debug only)
    when no variable selects cudaMallocAsync, and under ``--cpu`` (:func:`runs_on_cpu`: ComfyUI
    sets cudaMallocAsync there too, but no CUDA allocator is ever used), where it still switches.
    """
    if log is None:
        log = logging.getLogger(LOGGER_NAME)
    found = async_vars(environ)
    if not found:
        log.debug("[BCG] no allocator variable selects cudaMallocAsync; nothing to change")
        return []
    where = ", ".join(found)
    level = logging.DEBUG if runs_on_cpu(modules) else logging.INFO
    if opted_out(environ):
        log.log(
            level,
            "[BCG] %s=%s: PyTorch keeps the cudaMallocAsync allocator (from %s), so BCG stays off "
            "and every model runs unchanged (BCG's CUDA graphs need PyTorch's native allocator)",
            OPT_OUT_VAR,
            environ.get(OPT_OUT_VAR),
            where,
        )
        return []
    if "torch" in modules:
        log.log(
            logging.DEBUG if level == logging.DEBUG else logging.WARNING,
            "[BCG] torch was imported before BCG's prestartup script ran (by a launcher or an earlier "
            "prestartup script), so its allocator is already fixed: PyTorch runs cudaMallocAsync (from %s) "
            "and BCG stays off for this process; start ComfyUI with --disable-cuda-malloc to use BCG",
            where,
        )
        return []
    before = {name: environ[name] for name in found}
    changed = strip_cuda_malloc_async(environ)
    sync_comfy_args(modules)
    log.log(
        level,
        "[BCG] This ComfyUI process now uses PyTorch's native CUDA allocator instead of cudaMallocAsync, "
        "as --disable-cuda-malloc does: BCG's CUDA graphs are not safe under cudaMallocAsync (%s). "
        "To keep cudaMallocAsync (BCG then stays off), set %s=1",
        _describe({n: before[n] for n in changed}, environ),
        OPT_OUT_VAR,
    )
    return changed
