"""Benchmark: eager ComfyUI vs BCG vs torch.compile on one synthetic model, in one process.

    python -m bcg_runtime.bench --comfyui /path/to/ComfyUI            # Z-Image-Turbo 512², 8 steps
    python -m bcg_runtime.bench --family flux --resolutions 512x512,1024x1024 --steps 20 \\
        --modes eager,bcg,bcg-full,compile-cudagraphs --json out.json

Every mode samples the same random-weight checkpoint (built in the family's real key layout and
loaded by ComfyUI's own loader) through ``comfy.sample.sample`` with the same seed and prompts, so
the final latents are comparable bit for bit. Per row: median denoise seconds over ``--repeats``
runs after one warm run, speedup vs eager of the same run, kernel time and busy fraction from the
profiler, first-run seconds (warm-up capture or compile), peak memory, and exactness vs eager.

Without CUDA it runs the eager path of a reduced model at a small size and says that replay needs
CUDA: graphs cannot be captured on a CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Container, Iterator

from .comfy.models import RECIPES
from .comfy.synthetic import MIXED_NVFP4_FP8
from .gpu_clocks import ClockSampler

log = logging.getLogger("bcg_runtime.bench")

MODES = ("eager", "bcg", "bcg-full", "fast", "compile-cudagraphs", "compile-inductor")
#: Attention backends a mode may stack in front of it (``sage+bcg-full``) -> ComfyUI's registered
#: attention function, put where its launch flag would (``--use-sage-attention``,
#: ``--use-flash-attention``, ``--use-ck-attention`` = comfy-kitchen's int8 attention); ``cudnn``
#: keeps ComfyUI's PyTorch attention and puts cuDNN first in SDPA's backend order (mode fast does
#: that itself on Hopper and newer, so there ``cudnn+fast`` is ``fast``).
ATTENTION_STACK = {"sage": "sage", "flash": "flash", "ck": "comfy_kitchen_int8", "cudnn": None}
#: Step caches a mode may stack in front of it (``easycache+bcg-full``): core's nodes with their
#: defaults, applied to the model before the mode (BCG Apply after the cache node).
CACHE_STACK = ("easycache", "lazycache")
#: ComfyUI's TorchCompileModel stacked in front of a BCG mode (``compile-inductor+bcg-full``: the
#: workflow TorchCompileModel -> BCG Apply): BCG steps aside with the reason, so the row measures
#: what BCG costs there and must equal the compile mode alone.
COMPILE_STACK = ("compile-inductor", "compile-cudagraphs")
#: --weight-dtype -> ``synthetic.load_model`` keywords: UNETLoader's weight_dtype choices (the torch
#: dtype the loader stores weights in, cast in every forward), and ``comfy_quant_fp8``: a
#: mixed-precision checkpoint whose blocks' Linear layers are float8_e4m3fn with a scale, which
#: ComfyUI runs as fp8 matmuls (comfy-kitchen / ``torch._scaled_mm``) where the GPU computes fp8;
#: ``comfy_quant_nvfp4`` the same layers in nvfp4 (fp4 matmuls on Blackwell; other GPUs dequantize
#: them in every forward, which is what an nvfp4 release costs there); ``comfy_quant_mixed`` an
#: nvfp4/fp8 mixed release's layout (``synthetic.quantized_layers``).
WEIGHT_DTYPES = {
    "default": {},
    "fp8_e4m3fn": {"dtype": "float8_e4m3fn"},
    "fp8_e5m2": {"dtype": "float8_e5m2"},
    "comfy_quant_fp8": {"quant": "float8_e4m3fn"},
    "comfy_quant_nvfp4": {"quant": "nvfp4"},
    "comfy_quant_mixed": {"quant": MIXED_NVFP4_FP8},
}
#: Kernel name fragments -> the kind of work, first match wins (attention before GEMM: some
#: attention kernels are GEMM templates; triton templates named ``mm`` are GEMMs).
KERNEL_KINDS = (
    ("attention", ("flash", "fmha", "attn", "attention", "sdpa", "sage")),
    ("gemm", ("gemm", "cutlass", "nvjet", "xmma", "cublas", "scaled_mm", "_mm_", "tem_fused_mm", "matmul")),
    ("triton fused", ("triton",)),
    ("copy", ("memcpy", "memset")),
)
#: Kernels per profiled row kept by name in the JSON (``Row.top_kernels``).
TOP_KERNELS = 15
#: Bench mode -> BCG Apply mode.
BCG_MODES = {"bcg": "breakable", "bcg-full": "full", "fast": "fast"}
#: family -> (steps, cfg): each family's recipe (``comfy/models/<family>.py``), as in shared/BASELINE.md.
DEFAULTS = {name: (recipe.default_steps, recipe.default_cfg) for name, recipe in RECIPES.items()}
CPU_NOTE = "no CUDA: eager only, on a reduced model at a small size; graph replay needs an NVIDIA GPU"


@dataclass
class Row:
    family: str
    resolution: str
    mode: str
    steps: int
    cfg: float
    denoise_s: float | None = None
    speedup: float | None = None
    kernel_s: float | None = None
    busy: float | None = None
    first_run_s: float | None = None
    peak_allocated_gib: float | None = None
    peak_reserved_gib: float | None = None
    #: GPU seconds of one denoise by kind of kernel (:data:`KERNEL_KINDS`, else "elementwise/other").
    kernel_split: dict[str, float] | None = None
    #: The :data:`TOP_KERNELS` kernels with the most GPU time in that denoise: name (cut to 160
    #: characters), kind, calls, seconds; JSON only, for reading where a mode's time went.
    top_kernels: list[dict] | None = None
    #: Mean SM clock and board power over the timed runs (``gpu_clocks``; None without nvidia-smi):
    #: a denser timeline can draw the GPU to its power limit and lower its clock, slowing every kernel.
    sm_clock_mhz: float | None = None
    power_w: float | None = None
    exact: bool | None = None
    max_abs_diff: float | None = None
    replayed: str | None = None
    #: A BCG row's eager DiT calls by reason in its last run (the profiled one where it was
    #: profiled: ``session.last_run``, as ``replayed``); JSON only.
    eager_reasons: dict[str, int] | None = None
    #: A stacked BCG mode's output ``torch.equal`` to the same stack without BCG (``without_bcg``);
    #: for a mode listed again, to its first listing's (:func:`reference_mode`).
    equals_without_bcg: bool | None = None
    #: The mode's second listing in ``--modes``: does the tool reproduce itself (a compile mode
    #: compiles again after dynamo's reset)? Shown as "MODE again".
    again: bool = False
    #: Every timed run's latent ``torch.equal`` to the first's (same seed; None with one timed run):
    #: False says the mode is not deterministic from run to run (atomics, a reduction order that
    #: varies), so no comparison of its output with another mode's can be bit-exact either.
    repeatable: bool | None = None
    #: ``--host-profile N``: one more denoise under cProfile, its N functions with the most own
    #: Python time (where a host-bound mode's wall time goes beyond its kernels); JSON only.
    host_top: list[dict] | None = None
    #: Python function calls and their summed own time in that profiled denoise.
    host_calls: int | None = None
    host_python_s: float | None = None
    error: str | None = None
    runs_s: list[float] = field(default_factory=list)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bcg_runtime.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--comfyui", default=os.environ.get("COMFYUI_PATH"), help="ComfyUI folder (default: $COMFYUI_PATH, or the ComfyUI this pack is installed in)")
    p.add_argument("--family", default="zimage", choices=sorted(DEFAULTS), help="model family (default zimage = Z-Image-Turbo; " + ", ".join(f"{n} = {r.title}" for n, r in sorted(RECIPES.items())) + ")")
    p.add_argument("--resolutions", default=None, help="WIDTHxHEIGHT list, WIDTHxHEIGHTxFRAMES for video families (default 512x512; 128x128 without CUDA)")
    p.add_argument("--steps", type=int, default=None, help="sampling steps (default: the family's, see BASELINE.md)")
    p.add_argument("--cfg", type=float, default=None, help="cfg (default: the family's)")
    p.add_argument("--prompt-lengths", default=None, help="cond,uncond token counts (default 256,256 for flux; 100,12 otherwise)")
    p.add_argument("--references", default=None, help="edit workflow: reference images as WIDTHxHEIGHT list (e.g. 1024x1024 for Qwen-Image-Edit or FLUX.1 Kontext), each a random latent in cond and uncond's reference_latents")
    p.add_argument("--weight-dtype", default="default", choices=sorted(WEIGHT_DTYPES), help="UNETLoader's weight_dtype: fp8_e4m3fn / fp8_e5m2 store the weights in fp8 and cast them in every forward; comfy_quant_fp8 / comfy_quant_nvfp4: a mixed-precision checkpoint, the blocks' Linear layers in scaled fp8 / nvfp4 (comfy_quant_mixed: nvfp4, the first and last block fp8), run as fp8 / fp4 matmuls where the GPU has them (every mode runs that model)")
    p.add_argument("--modes", default=None, help=f"comma list of {','.join(MODES)} (default eager,bcg,bcg-full,compile-cudagraphs; eager without CUDA); a mode may stack an attention backend ({', '.join(ATTENTION_STACK)}) and a step cache ({', '.join(CACHE_STACK)}) in front: sage+bcg-full, easycache+bcg-full, sage+easycache (= eager with both); a BCG mode also a compile mode: compile-inductor+bcg-full (BCG steps aside, the row says why); a mode listed twice runs twice, its second row compared with its first (compile-inductor,compile-inductor: is a second compile bit-equal?)")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per mode after one warm run (median reported)")
    p.add_argument("--depth", type=int, default=None, help="blocks per stack (default: full on CUDA, 1 without)")
    p.add_argument("--json", default=None, help="write every row (and the environment) as JSON here")
    p.add_argument("--no-profile", action="store_true", help="skip the profiler run (no kernel time / busy)")
    p.add_argument("--host-profile", type=int, default=0, metavar="N", help="also run one denoise per mode under cProfile and keep its N functions with the most own time in the JSON (host_top), and its function calls (host_calls): where a host-bound mode's time goes")
    p.add_argument("--warmup-cost", default=None, metavar="RESOLUTIONS:TEXT_BUCKETS", help="for each BCG mode in --modes, also time one BCG Apply warm-up of this whole plan on a fresh model (e.g. 512x512,1024x1024:128,256 = 2 sizes x 2 prompt lengths): compile + capture seconds and graphs captured")
    return p.parse_args(argv)


def setup_comfyui(path: str | None) -> str:
    """Put ComfyUI on sys.path (CPU mode where there is no CUDA) and return its version."""
    import torch

    if path is None:  # installed as ComfyUI/custom_nodes/<pack>
        guess = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
        path = guess if os.path.isdir(os.path.join(guess, "comfy")) else None
    if path is None or not os.path.isdir(os.path.join(path, "comfy")):
        raise SystemExit("ComfyUI not found: pass --comfyui /path/to/ComfyUI or set COMFYUI_PATH")
    sys.path.insert(0, os.path.abspath(path))
    import comfy.cli_args

    if not torch.cuda.is_available():
        comfy.cli_args.args.cpu = True
    comfy.cli_args.args.preview_method = comfy.cli_args.LatentPreviewMethod.NoPreviews
    import comfy.model_management  # noqa: F401  (reads the args above)

    try:
        from comfyui_version import __version__
    except ImportError:
        __version__ = "unknown"
    return __version__


@contextlib.contextmanager
def phase(what: str) -> Iterator[None]:
    """Log the start and the duration of a long phase (model build, warm-up, compile)."""
    log.info("[BCG] %s ...", what)
    start = time.perf_counter()
    yield
    log.info("[BCG] %s: %.1f s", what, time.perf_counter() - start)


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed_sample(model, family, res, steps, cfg, positive, negative, seed: int = 0) -> tuple[Any, float]:
    """(latent, wall seconds) of one KSampler-path sampling, the device synchronised around it."""
    from .comfy import synthetic

    _sync()
    start = time.perf_counter()
    frames = res[2] if len(res) > 2 else None  # (width, height[, frames]): frames for video families
    out = synthetic.sample(model, family, res[0], res[1], steps, cfg, positive, negative, seed=seed, frames=frames)
    _sync()
    return out, time.perf_counter() - start


def size_text(res) -> str:
    """``512x512`` or, with frames, ``832x480x33``."""
    return "x".join(str(v) for v in res if v is not None)


def kernel_kind(name: str) -> str:
    """The kind of work a CUDA kernel named ``name`` does (:data:`KERNEL_KINDS`)."""
    lowered = name.lower()
    for kind, fragments in KERNEL_KINDS:
        if any(fragment in lowered for fragment in fragments):
            return kind
    return "elementwise/other"


def kernel_seconds(model, family, res, steps, cfg, positive, negative) -> tuple[float, dict[str, float], list[dict]]:
    """(kernel seconds, kernel seconds by :func:`kernel_kind`, the :data:`TOP_KERNELS` costliest
    kernels) of one profiled denoise."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        timed_sample(model, family, res, steps, cfg, positive, negative)
    split: dict[str, float] = {}
    kernels = []
    for evt in prof.key_averages():
        if evt.device_type == torch.autograd.DeviceType.CUDA:
            us = getattr(evt, "self_device_time_total", None) or getattr(evt, "self_cuda_time_total", 0.0)
            kind = kernel_kind(evt.key)
            split[kind] = split.get(kind, 0.0) + us / 1e6
            kernels.append({"name": evt.key[:160], "kind": kind, "calls": evt.count, "seconds": round(us / 1e6, 4)})
    top = sorted(kernels, key=lambda k: k["seconds"], reverse=True)[:TOP_KERNELS]
    return sum(split.values()), split, top


def host_profile(model, family, res, steps, cfg, positive, negative, top: int) -> tuple[list[dict], int, float]:
    """(the ``top`` functions by own time, function calls, summed own seconds) of one denoise
    under cProfile: the Python side of a mode, which the kernel profile cannot see."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    try:
        timed_sample(model, family, res, steps, cfg, positive, negative)
    finally:
        profiler.disable()
    stats = pstats.Stats(profiler)
    functions = [
        {"function": f"{os.path.basename(file)}:{line}({name})", "calls": calls, "tottime": round(tt, 4), "cumtime": round(ct, 4)}
        for (file, line, name), (_, calls, tt, ct, _) in stats.stats.items()
    ]
    functions.sort(key=lambda f: f["tottime"], reverse=True)
    return functions[:top], stats.total_calls, round(stats.total_tt, 4)


def split_mode(mode: str) -> tuple[tuple[str, ...], str]:
    """``"sage+easycache+bcg-full"`` -> ``(("sage", "easycache"), "bcg-full")``; ``"sage"`` ->
    ``(("sage",), "eager")``; ``"bcg"`` -> ``((), "bcg")``: the stacked tools (at most one attention
    backend and one cache, in any order, and before a BCG mode one compile mode) and the base mode.
    SystemExit naming the field otherwise."""
    *stack, last = mode.split("+")
    if last in ATTENTION_STACK or last in CACHE_STACK:
        stack, last = [*stack, last], "eager"
    kinds = [next((kind for kind in (ATTENTION_STACK, CACHE_STACK, COMPILE_STACK) if tool in kind), None) for tool in stack]
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


def with_torch_compile(model: Any, mode: str) -> Any:
    """A clone of ``model`` through core's TorchCompileModel helper with ``mode``'s backend."""
    from comfy_api.torch_helpers import set_torch_compile_wrapper

    compiled = model.clone()
    set_torch_compile_wrapper(model=compiled, backend=mode.split("-", 1)[1])
    return compiled


@contextlib.contextmanager
def attention_backend(name: str | None) -> Iterator[None]:
    """The stacked attention backend ``name`` for the duration (None: unchanged): ``cudnn`` puts
    cuDNN first in SDPA's backend order (``sdpa_order.cudnn_first``); any other name is a registered
    ComfyUI attention function (:data:`ATTENTION_STACK`'s value, or the name itself: ``split``),
    bound in every model module as its launch flag would have bound it at import.

    The model modules copy ``optimized_attention`` when imported, so each copy is replaced (the ones
    equal to the default, which is what the flag changes) and restored after."""
    if name is None:
        yield
        return
    if name == "cudnn":
        from .comfy.sdpa_order import cudnn_first

        with cudnn_first():
            yield
        return
    import comfy.ldm.modules.attention as attention

    try:
        chosen = attention.get_attention_function(ATTENTION_STACK.get(name) or name)
    except KeyError:
        chosen = None
    if chosen is None:
        raise RuntimeError(f"attention '{name}' is not available in this ComfyUI (install its package: pip install sageattention / flash-attn; ck needs comfy-kitchen's CUDA int8 attention)")
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


def prepare_mode(mode: str, model, family, res, positive, negative) -> tuple[Any, float, Any]:
    """(model to sample, first-run seconds, session or None) for one mode."""
    from .comfy import api
    from .comfy.wrappers import session_of

    if mode == "eager":
        return model, 0.0, None
    if mode in BCG_MODES:
        from .comfy.guards import compile_refusal

        m = api.apply(model, BCG_MODES[mode])
        report = api.warm_up(m, size_text(res), "", "1", positive, negative)
        if report.refusal and report.refusal != compile_refusal(m):
            raise RuntimeError(report.refusal)
        # Under a stacked TorchCompileModel BCG steps aside by design: the warm run compiles, as alone.
        return m, (-1.0 if report.refusal else report.seconds), session_of(m)
    if mode in COMPILE_STACK:
        return with_torch_compile(model, mode), -1.0, None  # first-run seconds measured by the warm run
    raise ValueError(f"--modes: unknown mode '{mode}'; accepted: {', '.join(MODES)}")


def run(args: argparse.Namespace) -> tuple[list[Row], dict]:
    import torch

    from .comfy import synthetic
    from .core import one_line
    from .plan import PlanError, parse_sizes

    comfy_version = setup_comfyui(args.comfyui)
    cuda = torch.cuda.is_available()
    steps, cfg = DEFAULTS[args.family]
    steps = args.steps or (steps if cuda else 2)
    cfg = args.cfg if args.cfg is not None else cfg
    depth = args.depth if args.depth is not None else (None if cuda else 1)
    try:
        resolutions = parse_sizes(args.resolutions or ("512x512" if cuda else "128x128"))
    except PlanError as e:
        raise SystemExit(f"--{e}") from None
    try:
        references = [(w, h) for w, h, _ in parse_sizes(args.references)] if args.references else []
    except PlanError as e:
        raise SystemExit("--references: " + str(e).split(": ", 1)[1]) from None
    modes = (args.modes or ("eager,bcg,bcg-full,compile-cudagraphs" if cuda else "eager")).split(",")
    for mode in modes:
        split_mode(mode)
    if args.warmup_cost:
        split_warmup_plan(args.warmup_cost)
    if not cuda:
        log.warning("[BCG] %s", CPU_NOTE)
        modes = ["eager"]
    lengths = args.prompt_lengths or ("256,256" if args.family == "flux" else "100,12")
    cond_len, uncond_len = (int(v) for v in lengths.split(","))
    env = {
        "date": time.strftime("%Y-%m-%d"),
        "gpu": torch.cuda.get_device_name() if cuda else "none (CPU)",
        "torch": torch.__version__,
        "comfyui": comfy_version,
        "comfy_kitchen": _comfy_kitchen_version(),
        "family": args.family,
        "depth": depth or "full",
        "weight_dtype": args.weight_dtype,
        "steps": steps,
        "cfg": cfg,
        "prompt_lengths": [cond_len, uncond_len],
        "command": "python -m bcg_runtime.bench " + " ".join(sys.argv[1:]),
        "note": None if cuda else CPU_NOTE,
    }
    t0 = time.perf_counter()
    with phase(f"building a random-weight {args.family} (depth {depth or 'full'})"):
        model = load_bench_model(args.family, depth, args.weight_dtype, "cuda" if cuda else None)
    env["model_build_s"] = round(time.perf_counter() - t0, 2)
    positive = synthetic.make_conditioning(args.family, cond_len, seed=1)
    negative = synthetic.make_conditioning(args.family, uncond_len, seed=2)
    if references:
        refs = [synthetic.make_reference_latent(args.family, w, h, seed=100 + i) for i, (w, h) in enumerate(references)]
        positive, negative = synthetic.with_reference_latents(positive, refs), synthetic.with_reference_latents(negative, refs)
        env["references"] = [size_text(r) for r in references]  # the JSON says it was an edit workflow

    rows: list[Row] = []
    for res in resolutions:
        reference = None
        eager_median = None
        outputs: dict[str, Any] = {}
        for mode in modes:
            row = Row(args.family, size_text(res), mode, steps, cfg, again=mode in outputs)
            rows.append(row)
            try:
                _measure(row, mode, model, args, res, positive, negative, cuda)
            except Exception as e:  # one broken mode must not hide the others' numbers
                row.error = one_line(e)
                log.error("[BCG] bench %s %s failed: %s", mode, row.resolution, row.error)
                continue
            out = row.__dict__.pop("_out")
            if mode == "eager":
                reference, eager_median = out, row.denoise_s
                row.exact, row.max_abs_diff = True, 0.0
            elif reference is not None:
                row.exact = bool(torch.equal(out, reference))
                row.max_abs_diff = 0.0 if row.exact else float((out.float() - reference.float()).abs().max())
            if eager_median:
                row.speedup = eager_median / row.denoise_s
            reference_of_row = reference_mode(mode, outputs)
            if reference_of_row is not None:
                row.equals_without_bcg = bool(torch.equal(out, outputs[reference_of_row]))
            outputs.setdefault(mode, out)
            # Each row as it completes: a run cut short by a time limit keeps the rows it measured.
            log.info("[BCG] row: %s", format_table([row]).splitlines()[-1])
            if args.json:
                write_json(args.json, env, rows)
    if args.warmup_cost:
        env["warmup_cost"] = []
        for mode in (m for m in modes if split_mode(m)[1] in BCG_MODES):
            with phase(f"{mode}: warm-up of {args.warmup_cost} on a fresh BCG model"):
                try:
                    env["warmup_cost"].append(warmup_cost(model, mode, args.warmup_cost))
                except Exception as e:
                    env["warmup_cost"].append({"mode": mode, "plan": args.warmup_cost, "error": f"{type(e).__name__}: {e}"[:300]})
    return rows, env


def load_bench_model(family: str, depth, weight_dtype: str, device):
    """The synthetic ``family`` model in the ``--weight-dtype`` format (:data:`WEIGHT_DTYPES`)."""
    import torch

    from .comfy import synthetic

    fmt = WEIGHT_DTYPES[weight_dtype]
    options = {"dtype": getattr(torch, fmt["dtype"])} if "dtype" in fmt else None
    return synthetic.load_model(family, depth=depth, seed=0, device=device, model_options=options, quant=fmt.get("quant"))


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

    from .comfy import api
    from .comfy.wrappers import session_of

    torch._dynamo.reset()  # mode fast compiles from scratch, as in a fresh process
    with stacked(mode, model) as (model, base):
        m = api.apply(model, BCG_MODES[base])
        report = api.warm_up(m, resolutions, buckets, "1")
    session_of(m).runner.reset()
    torch._dynamo.reset()
    if report.refusal:
        raise RuntimeError(report.refusal)
    return {"mode": mode, "plan": plan, "seconds": round(report.seconds, 1), "captured": report.captured, "report": report.text()}


def without_bcg(mode: str) -> str | None:
    """The mode that is ``mode`` minus an exact BCG mode (``sage+bcg-full`` -> ``sage``,
    ``bcg`` -> ``eager``): what its output must equal bit for bit. None for the others (fast is
    not exact by design; compile modes have no BCG)."""
    stack, base = split_mode(mode)
    if base not in ("bcg", "bcg-full"):
        return None
    return "+".join(stack) or "eager"


def reference_mode(mode: str, measured: Container[str]) -> str | None:
    """The measured mode whose output ``mode``'s must equal bit for bit: ``mode`` itself when it
    was measured before (listed again: is the tool reproducible?), else :func:`without_bcg`'s."""
    if mode in measured:
        return mode
    without = without_bcg(mode)
    return without if without in measured else None


@contextlib.contextmanager
def stacked(mode: str, model: Any) -> Iterator[tuple[Any, str]]:
    """``(model, base mode)`` for ``mode`` (:func:`split_mode`): a stacked cache, then a stacked
    TorchCompileModel, applied to the model the mode starts from (the node order cache ->
    TorchCompileModel -> BCG Apply), a stacked attention backend in place for the duration."""
    stack, base = split_mode(mode)
    for cache in (tool for tool in stack if tool in CACHE_STACK):
        model = with_cache(model, cache)
    for compiler in (tool for tool in stack if tool in COMPILE_STACK):
        model = with_torch_compile(model, compiler)
    with attention_backend(next((tool for tool in stack if tool in ATTENTION_STACK), None)):
        yield model, base


def _measure(row: Row, mode, model, args, res, positive, negative, cuda) -> None:
    """One mode's row, its stacked tools in place for all of it."""
    with stacked(mode, model) as (model, base):
        _measure_mode(row, base, model, args, res, positive, negative, cuda)


def _measure_mode(row: Row, mode, model, args, res, positive, negative, cuda) -> None:
    import torch

    from tqdm import tqdm

    family, steps, cfg = row.family, row.steps, row.cfg
    with phase(f"{row.resolution} {mode_label(row)}: preparing (warm-up capture / compile on the first run)"):
        m, first_run, session = prepare_mode(mode, model, family, res, positive, negative)
        _, warm = timed_sample(m, family, res, steps, cfg, positive, negative)  # also the compile run
    row.first_run_s = warm if first_run < 0 else first_run
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    out = None
    clocks = ClockSampler(torch.cuda.get_device_properties(torch.cuda.current_device()).uuid) if cuda else contextlib.nullcontext()
    first, same_as_first = None, []
    with clocks:
        for _ in tqdm(range(max(1, args.repeats)), desc=f"{row.resolution} {mode_label(row)}", unit="run", file=sys.stderr):
            out, seconds = timed_sample(m, family, res, steps, cfg, positive, negative)
            row.runs_s.append(seconds)
            if first is None:
                first = out.clone()
            else:
                same_as_first.append(bool(torch.equal(out, first)))
    row.repeatable = all(same_as_first) if same_as_first else None  # one run proves nothing
    if cuda and clocks.reading is not None:
        row.sm_clock_mhz, row.power_w = round(clocks.reading.sm_clock_mhz), round(clocks.reading.power_w)
    row.denoise_s = statistics.median(row.runs_s)
    if cuda:
        row.peak_allocated_gib = torch.cuda.max_memory_allocated() / 2**30
        row.peak_reserved_gib = torch.cuda.max_memory_reserved() / 2**30
        if not args.no_profile:
            row.kernel_s, row.kernel_split, row.top_kernels = kernel_seconds(m, family, res, steps, cfg, positive, negative)
            row.busy = row.kernel_s / row.denoise_s
    if args.host_profile > 0:
        row.host_top, row.host_calls, row.host_python_s = host_profile(m, family, res, steps, cfg, positive, negative, args.host_profile)
    if session is not None and session.last_run:
        row.replayed = f"{session.last_run['replayed']}/{session.last_run['calls']}"
        row.eager_reasons = dict(session.last_run["eager"]) or None
    row.__dict__["_out"] = out.cpu()
    # Give the next mode a clean device: this mode's graphs and compiled code go.
    if session is not None:
        session.runner.reset()
    if mode == "fast" or any(tool in COMPILE_STACK for tool in row.mode.split("+")):
        torch._dynamo.reset()
    if cuda:
        torch.cuda.empty_cache()


def _comfy_kitchen_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("comfy-kitchen")
    except Exception:
        return None


def mode_label(row: Row) -> str:
    """The row's mode as the tables show it: ``compile-inductor again`` for a second listing."""
    return f"{row.mode} again" if row.again else row.mode


def format_table(rows: list[Row]) -> str:
    head = ["model", "res", "mode", "denoise s", "vs eager", "kernel s", "busy", "first run s", "peak alloc GiB", "exact", "= w/o BCG", "replayed"]
    lines = [head]
    for r in rows:
        if r.error:
            lines.append([r.family, r.resolution, mode_label(r), "error: " + r.error[:60], "", "", "", "", "", "", "", ""])
            continue
        exact = "yes" if r.exact else (f"no ({r.max_abs_diff:.3g})" if r.exact is False else "-")
        exact += ", varies" if r.repeatable is False else ""  # its own runs differ from each other
        lines.append([
            r.family, r.resolution, mode_label(r), f"{r.denoise_s:.3f}", f"{r.speedup:.2f}x" if r.speedup else "-",
            f"{r.kernel_s:.3f}" if r.kernel_s else "-", f"{r.busy:.2f}" if r.busy else "-",
            f"{r.first_run_s:.1f}" if r.first_run_s else "-",
            f"{r.peak_allocated_gib:.1f}" if r.peak_allocated_gib is not None else "-", exact,
            {True: "yes", False: "NO"}.get(r.equals_without_bcg, "-"), r.replayed or "-",
        ])  # fmt: skip
    return render_columns(lines)


def render_columns(lines: list[list[Any]]) -> str:
    """``lines`` (a header first) as ``|``-separated columns padded to their widest cell."""
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(lines[0]))]
    return "\n".join(" | ".join(str(c).ljust(w) for c, w in zip(line, widths)) for line in lines)


def _or_dash(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def format_kernel_split(rows: list[Row]) -> str:
    """One line per profiled row: GPU seconds of one denoise per kernel kind, kinds as columns, and
    the SM clock and power of the timed runs where they were sampled."""
    profiled = [r for r in rows if r.kernel_split]
    kinds = [k for k, _ in KERNEL_KINDS if any(k in r.kernel_split for r in profiled)]
    kinds += sorted({k for r in profiled for k in r.kernel_split} - set(kinds))
    clocked = any(r.sm_clock_mhz is not None for r in profiled)
    lines = [["model", "res", "mode", *kinds, "total", *(("SM MHz", "power W") if clocked else ())]]
    for r in profiled:
        clock = (_or_dash(r.sm_clock_mhz), _or_dash(r.power_w)) if clocked else ()
        lines.append([r.family, r.resolution, mode_label(r), *(f"{r.kernel_split.get(k, 0.0):.3f}" for k in kinds), f"{r.kernel_s:.3f}", *clock])
    return render_columns(lines)


def format_host_profiles(rows: list[Row], top: int = 3) -> str:
    """Per profiled row: its Python calls and own time in one denoise, and its costliest functions."""
    lines = []
    for r in (r for r in rows if r.host_top is not None):
        costliest = ", ".join(f"{f['function']} {f['tottime']:.3f} s" for f in r.host_top[:top])
        lines.append(f"{r.family} | {r.resolution} | {mode_label(r)} | {r.host_calls} calls, {r.host_python_s:.3f} s | {costliest}")
    return "\n".join(lines)


def format_warmup_costs(env: dict) -> list[str]:
    """One line per ``--warmup-cost`` measurement of a run's ``env``."""
    lines = []
    for cost in env.get("warmup_cost", []):
        outcome = cost.get("error") or f"{cost['seconds']} s, {cost['captured']} graphs captured"
        lines.append(f"{env['family']} warm-up {cost['mode']} of {cost['plan']}: {outcome}")
    return lines


def write_json(path: str, env: dict, rows: list[Row]) -> None:
    with open(path, "w") as f:
        json.dump({"env": env, "rows": [asdict(r) for r in rows]}, f, indent=2)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    args = parse_args(argv)
    rows, env = run(args)
    if args.json:
        write_json(args.json, env, rows)
    workflow = f" references={','.join(env['references'])}" if env.get("references") else ""
    workflow += f" weights={env['weight_dtype']}" if env.get("weight_dtype", "default") != "default" else ""
    print(f"\n{env['family']} depth={env['depth']} steps={env['steps']} cfg={env['cfg']}{workflow} on {env['gpu']}, torch {env['torch']}, ComfyUI {env['comfyui']}")  # noqa: T201
    if env["note"]:
        print(env["note"])  # noqa: T201
    print(format_table(rows))  # noqa: T201
    if any(r.kernel_split for r in rows):
        print("\nGPU seconds per denoise by kernel kind\n" + format_kernel_split(rows))  # noqa: T201
    if any(r.host_top is not None for r in rows):
        print("\nPython side of one denoise (cProfile: calls, own seconds, costliest functions)\n" + format_host_profiles(rows))  # noqa: T201
    for line in format_warmup_costs(env):
        print(line)  # noqa: T201
    return 1 if any(r.error for r in rows) or any("error" in c for c in env.get("warmup_cost", [])) else 0


if __name__ == "__main__":
    sys.exit(main())
