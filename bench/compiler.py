"""BCG with ComfyUI's model compiler (0.34+) active around the DiT: both of BCG's choices, timed.

    python -m bench.compiler --family flux --depth 2 --steps 8 --json compiler.json
    python -m bench.compiler --family zimage --depth none --resolution 1024x1024

Per placement of the compiler's calls (``compiler_sim``: ``outer`` = MiniMax H3's, begin/end around
the DIFFUSION_MODEL wrappers; ``inner`` = Qwen-Image 2.1's, inside ``_forward``), in one process
and with one seed, the modes:

- ``eager``: the model without BCG, the compiler on (the reference every other latent is
  compared with, bit for bit);
- ``eager-off``: the same with ``args.disable_comfy_compiler`` set (what the compiler costs or
  saves by itself);
- ``bcg-aside``: BCG Apply with the default ``aside`` (the compiler off for BCG's model's runs);
- ``bcg-inside``: BCG Apply with ``BCG_COMFY_COMPILER=inside`` (the compiler stays on around
  BCG's captures and replays).

Per row: median denoise seconds over ``--repeats`` runs after one warm run (whose first calls
capture), speedup vs ``eager``, DiT calls replayed, ``torch.equal`` to eager, and per sampling run
what the compiler's malloc graph did: forwards that opened it, graph breaks, rogues, its peak and
physical bytes. The table is what docs/benchmarks.md shows.

Dynamic VRAM is on (ComfyUI's default on NVIDIA) unless ``--no-dynamic-vram``: comfy-aimdo is
initialised as ``main.py`` does, the model is a safetensors file loaded the UNETLoader way, and
BCG samples its fixed-address twin. Needs comfy-aimdo 0.6.0 (``comfy_aimdo.malloc_graph``); without
it, or without CUDA, every mode still runs (a plumbing check) and the JSON says why there was no
compiler.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator

log = logging.getLogger("bench.compiler")

#: In this order by default: ``bcg-aside`` (the product's default) before ``bcg-inside``, so a
#: compiler error under ``inside`` cannot touch the default's numbers.
MODES = ("eager", "eager-off", "bcg-aside", "bcg-inside")
MiB = 2**20


@dataclass
class Row:
    placement: str
    mode: str
    denoise_s: float | None = None
    speedup: float | None = None
    replayed: int = 0
    calls: int = 0
    eager_reasons: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: Every timed run's latent ``torch.equal`` to the placement's ``eager`` latent (same seed).
    equal_to_eager: bool | None = None
    #: Per sampling run (the warm run first): ``compiler_sim.CompilerRun`` as a dict.
    compiler: list[dict] = field(default_factory=list)
    runs_s: list[float] = field(default_factory=list)
    first_run_s: float | None = None
    error: str | None = None

    def compiler_total(self, key: str, timed_only: bool = True) -> int:
        runs = self.compiler[1:] if timed_only else self.compiler
        return sum(int(r.get(key, 0)) for r in runs)

    def compiler_max(self, key: str) -> int:
        return max((int(r.get(key, 0)) for r in self.compiler), default=0)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.compiler", description=__doc__.split("\n\n")[0])
    p.add_argument("--comfyui", default=os.environ.get("COMFYUI_PATH"), help="ComfyUI folder (default: $COMFYUI_PATH)")
    p.add_argument(
        "--family",
        default="flux",
        help="model family (default flux; one with a _forward, as every DIFFUSION_MODEL-wrapped DiT has)",
    )
    p.add_argument(
        "--depth", default="2", help="blocks per stack, or 'none' for the full model (default 2; 1 without CUDA)"
    )
    p.add_argument("--resolution", default=None, help="WIDTHxHEIGHT (default 512x512; 128x128 without CUDA)")
    p.add_argument("--steps", type=int, default=None, help="sampling steps (default: the family's; 2 without CUDA)")
    p.add_argument("--cfg", type=float, default=None, help="cfg (default: the family's)")
    p.add_argument("--placements", default="outer,inner", help="comma list of outer, inner (see compiler_sim)")
    p.add_argument(
        "--modes", default=",".join(MODES), help=f"comma list of {', '.join(MODES)}; eager first (the reference)"
    )
    p.add_argument("--bcg-mode", default="auto", help="BCG Apply's mode for the bcg rows (default auto)")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per mode after one warm run")
    p.add_argument(
        "--no-dynamic-vram", action="store_true", help="load the model as a classic ModelPatcher (no Dynamic VRAM twin)"
    )
    p.add_argument("--json", default=None, help="write the rows and the environment here")
    args = p.parse_args(argv)
    for mode in args.modes.split(","):
        if mode not in MODES:
            p.error(f"--modes: '{mode}' is not one of {', '.join(MODES)}")
    if args.modes.split(",")[0] != "eager":
        p.error("--modes: start with eager (every other latent is compared with it)")
    return args


@contextlib.contextmanager
def compiler_flag(off: bool) -> Iterator[None]:
    """``args.disable_comfy_compiler`` set to ``off`` for the block (where the host has the flag)."""
    from comfy.cli_args import args

    if not hasattr(args, "disable_comfy_compiler"):
        yield
        return
    before = args.disable_comfy_compiler
    args.disable_comfy_compiler = off
    try:
        yield
    finally:
        args.disable_comfy_compiler = before


@contextlib.contextmanager
def bcg_policy(value: str) -> Iterator[None]:
    from bcg_runtime.comfy.api import COMPILER_POLICY_VAR

    before = os.environ.get(COMPILER_POLICY_VAR)
    os.environ[COMPILER_POLICY_VAR] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(COMPILER_POLICY_VAR, None)
        else:
            os.environ[COMPILER_POLICY_VAR] = before


def _free() -> None:
    import comfy.model_management as mm
    import torch

    gc.collect()
    mm.soft_empty_cache()
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def measure(row: Row, model: Any, compiler: Any, sample: Any, reference: Any, repeats: int) -> Any:
    """Fill ``row`` from one warm and ``repeats`` timed sampling runs of ``model``; returns the
    warm run's latent. Each run ends with the compiler's node cleanup (``execution.py``)."""
    import torch

    from bcg_runtime.comfy import api

    session = api.session_of(model)
    outs = []
    for i in range(repeats + 1):
        try:
            out, seconds = sample(model)
        finally:  # the node's cleanup runs after a failed node too (execution.py)
            if compiler is not None:
                row.compiler.append(compiler.end_of_run().as_dict())
        if i == 0:
            row.first_run_s = round(seconds, 4)
        else:
            row.runs_s.append(round(seconds, 4))
            if session is not None and session.last_run:
                row.replayed += session.last_run["replayed"]
                row.calls += session.last_run["calls"]
                for reason, n in session.last_run["eager"].items():
                    row.eager_reasons[reason] = row.eager_reasons.get(reason, 0) + n
                row.notes = sorted(set(row.notes) | set(session.last_run.get("notes", [])))
        outs.append(out)
    row.denoise_s = round(statistics.median(row.runs_s), 4) if row.runs_s else None
    # the eager row against its own first run: is eager repeatable at all?
    row.equal_to_eager = all(bool(torch.equal(o, outs[0] if reference is None else reference)) for o in outs)
    return outs[0]


def early_aimdo_init() -> None:
    """``comfy_aimdo.control.init()`` before torch loads, where ComfyUI's ``main.py`` calls it
    (on a machine with an NVIDIA driver; ``compiler_sim.init_aimdo`` initialises the device later,
    after torch, as ``main.py`` does)."""
    if "torch" in sys.modules or shutil.which("nvidia-smi") is None:
        return
    try:
        import comfy_aimdo.control
    except ImportError:
        return
    comfy_aimdo.control.init()


def run(args: argparse.Namespace) -> tuple[list[Row], dict]:
    import torch

    from bcg_runtime.comfy import api
    from bcg_runtime.core import one_line

    from . import synthetic
    from .compiler_sim import PLACEMENTS, ensure_compiler_flags, init_aimdo, make_compiler, simulate
    from .measure import timed_sample
    from .setup import DEFAULTS, setup_comfyui

    comfy_version = setup_comfyui(args.comfyui)
    import comfy.model_management as mm

    cuda = torch.cuda.is_available()
    device = mm.get_torch_device()
    try:
        info = synthetic.family_info(args.family)
    except ValueError as exc:
        raise SystemExit(f"--family: {exc}") from None
    steps, cfg = DEFAULTS[args.family]
    steps = args.steps or (steps if cuda else 2)
    cfg = args.cfg if args.cfg is not None else cfg
    depth = None if str(args.depth).lower() == "none" else int(args.depth)
    depth = depth if cuda else 1
    width, height = (int(v) for v in (args.resolution or ("512x512" if cuda else "128x128")).lower().split("x"))
    placements = args.placements.split(",")
    for placement in placements:
        if placement not in PLACEMENTS:
            raise SystemExit(f"--placements: '{placement}' is not one of {', '.join(PLACEMENTS)}")
    modes = args.modes.split(",")

    why_no_compiler = init_aimdo(device) if cuda else "no CUDA: the malloc graph needs an NVIDIA GPU"
    simulated_flags = ensure_compiler_flags() if why_no_compiler is None else []
    compiler = make_compiler() if why_no_compiler is None else None
    dynamic = why_no_compiler is None and not args.no_dynamic_vram
    if dynamic:
        import comfy.model_patcher

        comfy.model_patcher.CoreModelPatcher = comfy.model_patcher.ModelPatcherDynamic
    env = {
        "date": time.strftime("%Y-%m-%d"),
        "gpu": torch.cuda.get_device_name() if cuda else "none (CPU)",
        "torch": torch.__version__,
        "allocator": torch.cuda.get_allocator_backend() if cuda else None,
        "comfyui": comfy_version,
        "comfy_aimdo": _version("comfy-aimdo"),
        "compiler": compiler.source if compiler is not None else None,
        "no_compiler_because": why_no_compiler,
        "simulated_flags": simulated_flags,
        "dynamic_vram": dynamic,
        "family": args.family,
        "depth": depth or "full",
        "resolution": f"{width}x{height}",
        "steps": steps,
        "cfg": cfg,
        "bcg_mode": args.bcg_mode,
        "command": "python -m bench.compiler " + " ".join(sys.argv[1:]),
    }
    pos_len, neg_len = info.prompt_lengths
    positive = synthetic.make_conditioning(args.family, pos_len, seed=1)
    negative = synthetic.make_conditioning(args.family, neg_len, seed=2)

    def sample(model):
        return timed_sample(model, args.family, (width, height), steps, cfg, positive, negative, seed=7)

    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bcg_compiler_") as tmp:
        t0 = time.perf_counter()
        if dynamic:
            path = synthetic.save_model_file(
                args.family, os.path.join(tmp, f"{args.family}.safetensors"), depth=depth, device=device
            )
            model = synthetic.load_model_file(path, args.family, depth)
        else:
            model = synthetic.load_model(args.family, depth=depth, seed=0, device=device)
        env["model_build_s"] = round(time.perf_counter() - t0, 2)
        env["model_patcher"] = type(model).__name__
        # No compiler calls at all (the 0.33 forward); also the process's first sampling, which on
        # CUDA differs from every later one (tests/comfy/conftest.py), so no reference is taken from it.
        sample(model)
        plain, _ = sample(model)
        if compiler is not None:
            compiler.end_of_run()
        env["compiler_flag_default"] = _compiler_flag()
        for placement in placements:
            sim = (
                simulate(model.model.diffusion_model, info.block_attrs, compiler, placement)
                if compiler
                else contextlib.nullcontext()
            )
            reference = None
            with sim:
                for mode in modes:
                    row = Row(placement, mode)
                    rows.append(row)
                    try:
                        reference = _measure_mode(row, mode, model, compiler, sample, reference, args, api)
                    except Exception as exc:  # one broken mode must not hide the others' numbers
                        row.error = one_line(exc)
                        log.error("[BCG] compiler bench %s %s failed: %s", placement, mode, row.error)
                    _free()
                    if args.json:
                        write_json(args.json, env, rows)
            env.setdefault("eager_equal_to_plain", {})[placement] = reference is not None and bool(
                torch.equal(reference, plain)
            )
        eager = {r.placement: r.denoise_s for r in rows if r.mode == "eager"}
        for r in rows:
            if r.denoise_s and eager.get(r.placement):
                r.speedup = round(eager[r.placement] / r.denoise_s, 3)
        del model
        _free()
    return rows, env


def _measure_mode(row: Row, mode: str, model, compiler, sample, reference, args, api):
    """One mode's row; returns the placement's eager reference (set by the ``eager`` row)."""
    if mode in ("eager", "eager-off"):
        with compiler_flag(mode == "eager-off"):
            out = measure(row, model, compiler, sample, reference, args.repeats)
        return out if mode == "eager" else reference
    with bcg_policy(mode.split("-", 1)[1]):
        bcg = api.apply(model, args.bcg_mode)
        measure(row, bcg, compiler, sample, reference, args.repeats)
    del bcg
    return reference


def _compiler_flag():
    from comfy.cli_args import args

    return getattr(args, "disable_comfy_compiler", None)


def _version(name: str) -> str | None:
    import importlib.metadata as md

    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def format_table(rows: list[Row]) -> str:
    """The markdown table of docs/benchmarks.md."""
    lines = [
        "| compiler calls | mode | denoise s | vs eager | replayed | equal to eager | graph opened / run | breaks | rogues | graph peak MiB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r.error:
            lines.append(f"| {r.placement} | {r.mode} | error: {r.error[:80]} | | | | | | | |")
            continue
        timed = max(1, len(r.compiler) - 1)
        opened = f"{r.compiler_total('begins') / timed:.0f}" if r.compiler else "-"
        lines.append(
            f"| {r.placement} | {r.mode} | {_num(r.denoise_s)} | {_num(r.speedup, 2)}x | "
            f"{r.replayed}/{r.calls} | {r.equal_to_eager} | {opened} | "
            f"{r.compiler_total('breaks', timed_only=False) if r.compiler else '-'} | "
            f"{r.compiler_total('rogues', timed_only=False) if r.compiler else '-'} | "
            f"{r.compiler_max('peak_used') / MiB:.0f} |"
        )
    return "\n".join(lines)


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def write_json(path: str, env: dict, rows: list[Row]) -> None:
    with open(path, "w") as f:
        json.dump({"env": env, "rows": [asdict(r) for r in rows]}, f, indent=2)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    args = parse_args(argv)
    early_aimdo_init()
    rows, env = run(args)
    if args.json:
        write_json(args.json, env, rows)
    print(
        f"\n{env['family']} depth={env['depth']} {env['resolution']} steps={env['steps']} cfg={env['cfg']} on {env['gpu']}, "
        f"torch {env['torch']} ({env['allocator']} allocator), ComfyUI {env['comfyui']}, comfy-aimdo {env['comfy_aimdo']}, "
        f"Dynamic VRAM {'on' if env['dynamic_vram'] else 'off'}; compiler: {env['compiler'] or env['no_compiler_because']}"
        + (f" (flags simulated: {', '.join(env['simulated_flags'])})" if env["simulated_flags"] else "")
    )
    print(format_table(rows))
    return 1 if any(r.error for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
