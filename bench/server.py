"""Server benchmark: the speed a user sees, prompt after prompt on a stock ComfyUI server.

    python -m bench.server --comfyui /path/to/ComfyUI                  # Z-Image-Turbo, 512² and 1024²
    python -m bench.server --models zimage,flux,flux:fp8_scaled,qwen_image --prompts 10 --json out.json
    python -m bench.server --models minimax_h3 --sizes 1344x768x124     # a video family, its own nodes
    python -m bench.server --models minimax_h3:fp8_scaled --profile    # + one profiled prompt per variant
    python -m bench.server --server-args=--disable-dynamic-vram         # a start that is not the stock one
    python -m bench.server --cpu                                       # smoke test without CUDA

Starts ComfyUI as users start it, ``python main.py`` with no flags (Dynamic VRAM where that
ComfyUI has it, the pack's allocator switch), in a stock copy of the ComfyUI tree (no other custom
nodes, none of its models or user data; ``bench.comfy_base.stock_copy``) with this pack in its
custom_nodes and a synthetic full-size model in its models folder (random weights in the family's
real key layout, ``bench.synthetic``; conditioning fed by LoadTrainingDataset, no text encoder).
One server per model (family and weight format), one after the other; each model file is deleted
after its server stopped (``--keep-models`` keeps them).

On each server, per size, the pack's example workflow (``scripts/bcg_api_example.json``, its latent
saved; for a video family, MiniMax H3 or Wan, its own shift and empty-latent nodes in place of the
example's: ``comfy_workflow.VIDEO_NODES``) in these variants, ``--prompts`` prompts each with seeds
``--seed``, ``--seed``+1, ...:

- ``eager``: BCG Apply and BCG Warmup Capture bypassed; always run, it is every BCG prompt's twin;
- ``bcg``: BCG Apply alone (mode auto, capture on first call);
- ``warmup``: BCG Apply (capture "warm-up only") and BCG Warmup Capture of that size and prompt;
- ``fast``: BCG Apply alone in mode fast (not bit-exact by design: its difference is reported).

Between variants ``POST /free`` unloads the models and empties ComfyUI's node cache (``--keep-cache``
leaves both): each variant's first prompt loads the model (from the page cache after the first
time) and pays its own twin and captures, and its memory figures are its own.

Per prompt (JSON ``jobs[].prompts``): wall seconds (queue to the websocket's end message), the
server's own execution seconds (history timestamps), the denoise at the steady rate and the time
outside it, the sampler's one-off setup (model load, fixed-address twin, capture) and each node's
seconds (``bench.server_stats``); after it, torch reserved / allocated memory (``/system_stats``)
and the server's resident memory (VmRSS); the GPU's mean SM clock and power draw while it ran
(``nvidia-smi``, where there is one, averaged over every GPU it lists: a prompt slow at a lower
clock is the GPU's pace); BCG's replayed/calls and eager reasons (its ``bcg.status`` event);
whether its latent equals its eager twin's (same seed) bit for bit. Per
variant and size (``jobs[].summaries``, the markdown table printed last): the first prompt apart
(its cost over the median of the others), the others' median and spread (max / median over
prompts 2..N), speed against eager (its median over eager's).

A model in another weight format after the same family in bf16 (``--models flux,flux:fp8_scaled``:
the fp8 checkpoint is the bf16 one's weights quantised) has every latent also measured against the
bf16 eager latent of its seed (``vs_bf16_eager``: max abs difference and PSNR), and a second table
sets each of its variants against bf16 eager: the speed a user picking a weight format and a mode
gets, and how far the image moves (on the synthetic model, stated as such).

Without CUDA there is nothing real to measure: it says so and stops, unless ``--cpu`` (a smoke
test of the same steps: the server gets ``--cpu`` and a free port, a depth-1 model at 64x64, and
BCG runs every call eager with the no-CUDA reason).
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import math
import os
import platform
import re
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from bcg_runtime.plan import PlanError, parse_sizes

from . import comfy_base, comfy_workflow, server_profile, server_report, server_stats
from .comfy_server import TEST_ONLY_ENV, ComfyServer, cuda_available, free_port, gpu_memory, post, rss_mib
from .comfy_ws import run_prompt
from .gpu_clocks import ClockSampler

log = logging.getLogger("bench.server")

#: Families whose text-to-image workflow is the example's (16-channel latent, EmptySD3LatentImage),
#: then the video families whose own shift and empty-latent nodes replace the example's
#: (``comfy_workflow.VIDEO_NODES``).
IMAGE_FAMILIES = ("zimage", "flux", "qwen_image")
FAMILIES = (*IMAGE_FAMILIES, *comfy_workflow.VIDEO_NODES)
#: Default sizes of the image families: the example's two (a video family's: ``VideoNodes.default_size``).
IMAGE_SIZES = "512x512,1024x1024"
VARIANTS = ("eager", "bcg", "warmup", "fast")
#: The BCG Apply mode each BCG variant runs (eager bypasses the node).
VARIANT_MODES = {"bcg": "auto", "warmup": "auto", "fast": "fast"}
#: What ``--cpu`` changes when its flag is not given (and the sizes: 64x64, 64x64x5 for video).
SMOKE = {"prompts": 2, "depth": 1, "steps": 2, "prompt_length": 8}
NO_CUDA = (
    "bench.server measures a stock ComfyUI on an NVIDIA GPU and this machine has no CUDA, so it has no real "
    "numbers to take. Run it on a CUDA machine; `--cpu` runs the same steps here as a smoke test on a tiny model "
    "(BCG then runs every call eager with the no-CUDA reason)."
)


def parse_models(text: str) -> list[tuple[str, str]]:
    """``zimage,flux,flux:fp8_scaled`` -> ``[(family, weights), ...]`` (weights default bf16)."""
    out = []
    for item in (i.strip() for i in text.split(",") if i.strip()):
        family, _, weights = item.partition(":")
        weights = weights or "bf16"
        if family not in FAMILIES:
            raise SystemExit(f"--models: {family!r} is not one of {', '.join(FAMILIES)}")
        if weights not in comfy_base.WEIGHT_FORMATS:
            raise SystemExit(
                f"--models: weights {weights!r} of {family}: one of {', '.join(comfy_base.WEIGHT_FORMATS)}"
            )
        out.append((family, weights))
    if not out:
        raise SystemExit("--models: empty")
    return out


def family_sizes(family: str, text: str | None, cpu: bool = False) -> list[tuple[int, ...]]:
    """The sizes ``family`` is measured at: ``--sizes`` (WIDTHxHEIGHT for an image family,
    WIDTHxHEIGHTxFRAMES for a video family, frames as its latent node takes them), else its
    default (:data:`IMAGE_SIZES`, ``VideoNodes.default_size``; 64x64 or 64x64x5 with ``--cpu``)."""
    nodes = comfy_workflow.VIDEO_NODES.get(family)
    video = nodes is not None
    if text is None:
        text = ("64x64x5" if video else "64x64") if cpu else (nodes.default_size if video else IMAGE_SIZES)
    try:
        sizes = parse_sizes(text, field_name="--sizes")
    except PlanError as e:
        raise SystemExit(str(e)) from None
    for w, h, frames in sizes:
        if video and frames is None:
            raise SystemExit(
                f"--sizes: {family} makes video: give WIDTHxHEIGHTxFRAMES (e.g. {nodes.default_size}), not {w}x{h}"
            )
        if not video and frames is not None:
            raise SystemExit(
                f"--sizes: {family} makes images: give WIDTHxHEIGHT (e.g. 1024x1024), not {w}x{h}x{frames}"
            )
    return [(w, h) if frames is None else (w, h, frames) for w, h, frames in sizes]


def size_label(size: tuple[int, ...]) -> str:
    return "x".join(map(str, size))


def parse_variants(text: str) -> list[str]:
    """The ``--variants`` list in run order, eager first (always: the twins)."""
    asked = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [v for v in asked if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"--variants: {', '.join(unknown)} not in {', '.join(VARIANTS)}")
    return [v for v in VARIANTS if v in asked or v == "eager"]


def family_variants(family: str, variants: list[str]) -> tuple[list[str], dict[str, str]]:
    """(the variants ``family`` runs, {variant left out: why}): a variant whose BCG mode
    (:data:`VARIANT_MODES`) the family's adapter refuses (MiniMax H3 and Wan have no mode fast)
    is left out with the node's own error text rather than failing the family's remaining sizes."""
    from bcg_runtime.comfy.api import Mode
    from bcg_runtime.comfy.models import by_family

    adapter = by_family(family)
    refusal = adapter.mode_refusal
    left_out = {v: why for v in variants if v in VARIANT_MODES and (why := refusal(Mode(VARIANT_MODES[v])))}
    return [v for v in variants if v not in left_out], left_out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.server", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--comfyui",
        default=None,
        help="ComfyUI folder to copy (default: $COMFYUI_PATH, or the ComfyUI this pack is installed in)",
    )
    p.add_argument(
        "--models",
        default="zimage",
        help=f"FAMILY[:WEIGHTS] list, one server each; families {', '.join(FAMILIES)}; weights {', '.join(comfy_base.WEIGHT_FORMATS)} (default bf16), e.g. zimage,flux,flux:fp8_scaled,qwen_image",
    )
    p.add_argument(
        "--sizes",
        default=None,
        help=f"WIDTHxHEIGHT list, WIDTHxHEIGHTxFRAMES for a video family (default {IMAGE_SIZES}; "
        f"{', '.join(f'{k} {v.default_size}' for k, v in comfy_workflow.VIDEO_NODES.items())}; 64x64 or 64x64x5 with --cpu)",
    )
    p.add_argument(
        "--prompts",
        type=int,
        default=None,
        help="prompts per variant and size, seeds --seed, --seed+1, ... (default 3; 2 with --cpu)",
    )
    p.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help=f"comma list of {', '.join(VARIANTS)} (default all; eager always runs: it is the twin)",
    )
    p.add_argument(
        "--steps", type=int, default=None, help="sampling steps (default: the family's recipe; 2 with --cpu)"
    )
    p.add_argument("--cfg", type=float, default=None, help="cfg (default: the family's recipe)")
    p.add_argument("--depth", type=int, default=None, help="blocks per stack (default: the real model; 1 with --cpu)")
    p.add_argument(
        "--prompt-length",
        type=int,
        default=None,
        help="conditioning tokens (default: what the family's text encoder gives a 100-token prompt, e.g. 256 for FLUX.1's T5; 8 with --cpu)",
    )
    p.add_argument("--seed", type=int, default=1000, help="seed of each variant's first prompt")
    p.add_argument(
        "--work",
        default=None,
        help="folder for the ComfyUI copy and the models (default: a new temporary folder, removed at the end)",
    )
    p.add_argument("--keep-models", action="store_true", help="keep each model file after its server stopped")
    p.add_argument(
        "--keep-cache",
        action="store_true",
        help="do not POST /free between variants (by default each variant starts with no model loaded and an empty node cache, so its first prompt pays load, twin and capture and its memory is its own)",
    )
    p.add_argument(
        "--json",
        default="bench_out/server.json",
        help="write everything here (default bench_out/server.json), after every size",
    )
    p.add_argument("--timeout", type=float, default=900, help="seconds one prompt may take")
    p.add_argument(
        "--profile",
        action="store_true",
        help="after each variant's prompts, one more prompt sampled under torch.profiler inside the server "
        "(bench.server_profile): busy fraction, kernel seconds by kind, costliest kernels, CUDA runtime calls; "
        "not in the timings",
    )
    p.add_argument(
        "--server-args",
        default="",
        help="flags for main.py after the stock start, space-separated, e.g. '--disable-dynamic-vram' (default none: "
        "`python main.py` as users start it); the table's header shows the command",
    )
    p.add_argument(
        "--cpu",
        action="store_true",
        help="smoke test without CUDA: the server gets --cpu and a free port, a tiny model (see --sizes, --prompts, --depth, --steps)",
    )
    args = p.parse_args(argv)
    if args.cpu:
        for name, value in SMOKE.items():
            if getattr(args, name) is None:
                setattr(args, name, value)
    args.prompts = args.prompts or 3
    args.model_list = parse_models(args.models)
    args.size_lists = {family: family_sizes(family, args.sizes, args.cpu) for family, _ in args.model_list}
    args.variant_list = parse_variants(args.variants)
    return args


def comfyui_path(arg: str | None) -> Path:
    """``--comfyui``, else $COMFYUI_PATH, else the ComfyUI this pack sits in (custom_nodes/<pack>)."""
    path = arg or os.environ.get("COMFYUI_PATH") or str(comfy_base.PACK_ROOT.parents[1])
    if not (Path(path) / "main.py").is_file():
        raise SystemExit(f"no ComfyUI at {path} (no main.py): pass --comfyui /path/to/ComfyUI or set COMFYUI_PATH")
    return Path(path).resolve()


def comfyui_version(tree: Path) -> str:
    try:
        return re.search(r'"(.+)"', (tree / "comfyui_version.py").read_text()).group(1)
    except (OSError, AttributeError):
        return "unknown"


def family_settings(family: str, args: argparse.Namespace) -> tuple[int, float, int]:
    """(steps, cfg, prompt length): the family's recipe unless given; by default the length its
    text encoder gives a 100-token prompt (``bench.setup.default_prompt_lengths``)."""
    from .setup import DEFAULTS, default_prompt_lengths

    steps, cfg = DEFAULTS[family]
    length = args.prompt_length or default_prompt_lengths(family)[0]
    return args.steps or steps, cfg if args.cfg is None else args.cfg, length


def prepare_model(tree: Path, family: str, weights: str, depth, length: int, cuda: bool) -> tuple[str, str]:
    """Write the model file and the conditioning dataset into ``tree``; (unet name, dataset name)."""
    import torch

    from . import synthetic

    name = f"bcg_server_{family}_{weights}" + ("" if depth is None else f"_depth{depth}")
    unet = comfy_base.unet_file(name, weights)
    comfy_base.write_unet(family, tree / "models" / "diffusion_models" / unet, depth=depth, weights=weights,
                          device="cuda" if cuda else None)  # fmt: skip
    if cuda:
        torch.cuda.empty_cache()  # the server, not this process, should hold the device's memory
    folder = f"bcg_server_cond_{family}_txt{length}"
    latents = [{"samples": synthetic.empty_latent(family, 64, 64).cpu()}]
    comfy_base.save_training_dataset(tree, folder, latents, [synthetic.make_conditioning(family, length, seed=1)])
    return unet, folder


def variant_prompt(base: dict, variant: str, prefix: str, seed: int | None = None) -> dict:
    """The workflow of ``variant`` (see the module docstring) from the example ``base``, with the
    sampler's ``seed`` where one is given."""
    if seed is not None:
        base = comfy_workflow.set_sampler(base, seed=seed)
    if variant == "eager":
        return comfy_workflow.eager_twin(base, prefix)
    if variant == "warmup":
        return comfy_workflow.set_prefix(
            comfy_workflow.set_apply(json.loads(json.dumps(base)), VARIANT_MODES[variant], "warm-up only"), prefix
        )
    prompt = comfy_workflow.without_warmup(base)
    return comfy_workflow.set_prefix(comfy_workflow.set_apply(prompt, VARIANT_MODES[variant], "on first call"), prefix)


def measure_prompt(server: ComfyServer, prompt: dict, timeout: float) -> tuple[dict, object]:
    """Run one prompt; its record (timings, memory, BCG's report) and its latent."""
    from bcg_client import comfy_http

    with ClockSampler() as clocks:  # the GPU's own pace: a slow prompt at a lower SM clock is the GPU's, not ours
        run = run_prompt(server, prompt, timeout=timeout)
    entry = comfy_http.wait(server.url, run.prompt_id, timeout=120)
    mem = gpu_memory(server)
    rec = server_stats.prompt_timings(run.messages, run.seconds, comfy_workflow.SAMPLER_ID)
    rec["nodes_s"] = {prompt.get(i, {}).get("class_type", i): s for i, s in rec["nodes_s"].items()}
    rec.update(
        prompt_id=run.prompt_id, execution_s=comfy_http.execution_seconds(entry),
        cached_nodes=sorted(next((d.get("nodes") or [] for _, k, d in run.messages if k == "execution_cached"), [])),
        reserved_mib=mem["reserved"] / 2**20, allocated_mib=mem["allocated"] / 2**20, vram_free_mib=mem["vram_free"] / 2**20,
        rss_mib=rss_mib(server.proc.pid),
    )  # fmt: skip
    if clocks.reading is not None:
        rec.update(sm_clock_mhz=clocks.reading.sm_clock_mhz, power_w=clocks.reading.power_w)
    last = run.events[-1].get("last_run") if run.events else None
    if last is not None and comfy_workflow.APPLY_ID in prompt:
        rec.update(
            calls=last.get("calls"),
            replayed=last.get("replayed"),
            eager=dict(last.get("eager") or {}),
            state=last.get("state"),
        )
    return rec, comfy_workflow.saved_streams(server.base / "output", entry)


def profile_prompt(server: ComfyServer, prompt: dict, args: argparse.Namespace) -> dict:
    """Run ``prompt`` with its sampling profiled inside the server (:mod:`.server_profile`); the
    profile's summary, or ``{"error": ...}`` when none came back."""
    out = Path(args.json).parent / "server_profile.json"
    server_profile.request(server.base, out)
    try:
        measure_prompt(server, prompt, args.timeout)
    finally:
        (server.base / server_profile.REQUEST).unlink(missing_ok=True)
    if not out.exists():
        return {"error": "no profile came back (the prompt sampled nothing, or the profiling node did not load)"}
    return json.loads(out.read_text())


def free_server(server: ComfyServer, settle_s: float = 2.0) -> None:
    """``POST /free`` with ``unload_models`` and ``free_memory``: ComfyUI unloads every model and
    drops its node cache (so the BCG sessions and graphs of the previous variant) as soon as its
    prompt worker wakes, which the request does; ``settle_s`` gives it that time outside the next
    prompt's clock."""
    post(server.url, "/free", {"unload_models": True, "free_memory": True})
    time.sleep(settle_s)


def compare(got, want) -> tuple[bool, float | None]:
    """(bit-equal, max abs difference) of a latent against its eager twin's."""
    import torch

    if got.shape != want.shape:
        return False, None
    return bool(torch.equal(got, want)), float((got.float() - want.float()).abs().max())


def fidelity(got, reference) -> dict | None:
    """How close a latent of another weight format (or mode) comes to the bf16 eager latent of the
    same seed: ``max_abs`` and ``psnr_db``, the PSNR over the reference's peak-to-peak range
    (``None`` where the two are identical). ``None`` where the shapes differ."""
    if got.shape != reference.shape:
        return None
    got, reference = got.float(), reference.float()
    mse = float((got - reference).pow(2).mean())
    peak = float(reference.max() - reference.min())
    psnr = None if mse == 0 else 10 * math.log10(peak**2 / mse) if peak > 0 else float("-inf")
    return {"max_abs": float((got - reference).abs().max()), "psnr_db": psnr}


def run_job(
    tree: Path, family: str, weights: str, args: argparse.Namespace, cuda: bool, record, save, references: dict
) -> dict:
    """One model on its own server: every size x variant x prompt (see the module docstring).

    ``references`` holds the bf16 eager latents by (family, size, seed): a bf16 job adds its own,
    a job in another weight format has each prompt's latent measured against them
    (``vs_bf16_eager``, :func:`fidelity`), so `fast` over fp8 stands against the bf16 eager it
    replaces."""
    steps, cfg, length = family_settings(family, args)
    variants, left_out = family_variants(family, args.variant_list)
    job = {"family": family, "weights": weights, "depth": args.depth, "steps": steps, "cfg": cfg, "prompt_length": length,
           "prompts": [], "summaries": [], "variants_left_out": left_out}  # fmt: skip
    record["jobs"].append(job)
    for variant, why in left_out.items():
        log.warning("[BCG] %s: variant %s left out: %s", family, variant, why)
    t0 = time.monotonic()
    unet, cond = prepare_model(tree, family, weights, args.depth, length, cuda)
    job["model_build_s"] = time.monotonic() - t0
    server = ComfyServer(tree, cuda=cuda, env=dict.fromkeys(TEST_ONLY_ENV), bare=True, port=None if cuda else free_port(),
                         log_path=Path(args.json).parent / f"server_{family}_{weights}.log",
                         extra_args=args.server_args.split())  # fmt: skip
    try:
        t0 = time.monotonic()
        server.start(timeout=600)
        job["server_start_s"] = time.monotonic() - t0
        text = server.log_path.read_text(errors="replace")
        record["env"].update(
            dynamic_vram="DynamicVRAM support detected and enabled" in text,
            command=" ".join(["python main.py", *server.command()[2:]]),
        )
        job["bcg_log"] = [line.strip() for line in text.splitlines() if "[BCG]" in line][:10]
        from bcg_client import comfy_http

        record["env"]["device"] = comfy_http.http_json(server.url, "/system_stats")["devices"][0]["name"]
        for size in args.size_lists[family]:
            size_text = size_label(size)
            base = comfy_workflow.latent_workflow(
                unet, cond, size, steps, args.seed, prefix="bcg_server/x", capture="on first call", family=family
            )
            comfy_workflow.set_sampler(base, cfg=cfg)
            if weights in comfy_base.GGUF_TYPES:
                comfy_workflow.with_gguf_loader(base)
            twins, differing = {}, []
            for variant in variants:
                if job["prompts"] and not args.keep_cache:
                    free_server(server)
                prompts = []
                stem = f"bcg_server/{family}_{weights}_{size_text}_{variant}"
                for i in range(args.prompts):
                    seed = args.seed + i
                    rec, latent = measure_prompt(
                        server, variant_prompt(base, variant, f"{stem}_{i}", seed), args.timeout
                    )
                    rec.update(size=size_text, variant=variant, index=i, seed=seed)
                    if variant == "eager":
                        twins[seed] = latent
                        if weights == "bf16":
                            references[(family, size_text, seed)] = latent
                    else:
                        rec["bit_equal"], rec["max_abs_diff"] = compare(latent, twins[seed])
                        if not rec["bit_equal"]:
                            differing.append((rec, latent))
                    if weights != "bf16" and (family, size_text, seed) in references:
                        rec["vs_bf16_eager"] = fidelity(latent, references[(family, size_text, seed)])
                    log.info("[BCG] %s", server_report.format_prompts({**job, "prompts": [rec]})[0])
                    prompts.append(rec)
                job["prompts"] += prompts
                if args.profile:
                    seed = args.seed + args.prompts
                    profile = profile_prompt(server, variant_prompt(base, variant, f"{stem}_profile", seed), args)
                    job.setdefault("profiles", []).append(
                        {"size": size_text, "variant": variant, "seed": seed, **profile}
                    )
                eager = next(
                    (
                        s["median_wall_s"]
                        for s in job["summaries"]
                        if s["size"] == size_text and s["variant"] == "eager"
                    ),
                    None,
                )
                job["summaries"].append(
                    {
                        "size": size_text,
                        "variant": variant,
                        **server_stats.summarize(prompts, None if variant == "eager" else eager),
                    }
                )
                save()  # a run cut by its time limit keeps every variant that finished
            job["eager_repeats"] = job.get("eager_repeats", []) + repeat_eager(
                server, base, differing, twins, args, f"{family}_{weights}_{size_text}"
            )
            for summary in job["summaries"]:
                if summary["size"] == size_text:
                    summary["equal_to_eager_repeat"] = sum(
                        1 for p in job["prompts"] if p["size"] == size_text and p["variant"] == summary["variant"] and p.get("bit_equal_to_eager_repeat")
                    )  # fmt: skip
            save()
    finally:
        server.stop()
        if not args.keep_models:
            (tree / "models" / "diffusion_models" / unet).unlink(missing_ok=True)
    return job


def repeat_eager(server, base: dict, differing: list, twins: dict, args: argparse.Namespace, name: str) -> list[dict]:
    """Is the eager twin itself reproducible where a BCG latent differed from it? Each such seed's
    eager prompt runs again (after every variant: the model warm, no new load) and both the first
    eager latent and each differing BCG latent are compared with the repeat. A BCG latent equal to
    the repeat, with the repeat unequal to the first eager run, says the first eager run was the odd
    one (``eager_repeat_equal`` False), not BCG; each differing prompt gets ``bit_equal_to_eager_repeat``."""
    repeats = []
    for seed in sorted({rec["seed"] for rec, _ in differing}):
        prompt = variant_prompt(base, "eager", f"bcg_server/{name}_eager_repeat_{seed}", seed)
        rec, latent = measure_prompt(server, prompt, args.timeout)
        equal, diff = compare(latent, twins[seed])
        repeats.append(
            {
                "size": name.rsplit("_", 1)[-1],
                "seed": seed,
                "eager_repeat_equal": equal,
                "max_abs_diff": diff,
                "wall_s": rec["wall_s"],
            }
        )
        for bcg_rec, bcg_latent in differing:
            if bcg_rec["seed"] == seed:
                bcg_rec["bit_equal_to_eager_repeat"] = compare(bcg_latent, latent)[0]
        log.info(
            "[BCG] eager again, seed %d: %s the first eager run (max abs diff %g)",
            seed,
            "equal to" if equal else "DIFFERS from",
            diff,
        )
    return repeats


def environment(args: argparse.Namespace, tree: Path) -> dict:
    import torch

    sizes = {family: ",".join(map(size_label, sizes)) for family, sizes in args.size_lists.items()}
    return {
        "comfyui": comfyui_version(tree), "torch": torch.__version__, "python": platform.python_version(),
        "date": datetime.date.today().isoformat(), "cpu_smoke": args.cpu, "command": "python main.py",
        "device": None, "dynamic_vram": None, "sizes": sizes, "variants": args.variant_list, "prompts": args.prompts,
        "seed": args.seed, "argv": sys.argv[1:],
    }  # fmt: skip


def exact_failures(record: dict) -> list[str]:
    """Exact variants (bcg, warmup) whose latent differs from its eager twin and from that twin's
    repeat (a latent equal to the repeat, where the first eager run was the odd one, is exact)."""
    return [
        f"{job['family']} {job['weights']} {p['size']} {p['variant']} #{p['index']}"
        for job in record["jobs"] for p in job["prompts"]
        if p["variant"] in ("bcg", "warmup") and p.get("bit_equal") is False and not p.get("bit_equal_to_eager_repeat")
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    # A time limit's SIGTERM (gpu_suite.sh runs stages under `timeout`) unwinds through the finally
    # blocks: the server is stopped (it would hold the GPU and port 8188) and the JSON written.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args = parse_args(argv)
    cuda = not args.cpu and cuda_available()
    if not args.cpu and not cuda:
        sys.stderr.write(NO_CUDA + "\n")
        return 2
    source = comfyui_path(args.comfyui)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bcg_server_bench_"))
    tree = work / "ComfyUI"
    shutil.rmtree(tree, ignore_errors=True)
    comfy_base.server_tree(source, tree, gguf=any(w in comfy_base.GGUF_TYPES for _, w in args.model_list))
    if args.profile:
        (tree / "custom_nodes" / server_profile.NODE_DIR.name).symlink_to(
            server_profile.NODE_DIR, target_is_directory=True
        )
    comfy_base.import_comfyui(tree, cpu=not cuda)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    record = {"env": environment(args, tree), "jobs": []}

    def save():
        Path(args.json).write_text(json.dumps(record, indent=1, default=str))

    references: dict = {}  # bf16 eager latents, for the other weight formats (run_job)
    try:
        for family, weights in args.model_list:
            try:
                run_job(tree, family, weights, args, cuda, record, save, references)
            except Exception as exc:  # recorded; the other models still run
                record["jobs"][-1]["error"] = f"{type(exc).__name__}: {exc}"
                log.error("[BCG] %s %s: %s", family, weights, record["jobs"][-1]["error"])
            save()
    finally:
        save()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    out = sys.stdout
    for job in record["jobs"]:
        out.write("\n".join(server_report.format_prompts(job)) + "\n")
    out.write(f"Written: {Path(args.json).resolve()} (every prompt, the environment; --json names another file)\n")
    out.write("\n" + server_report.format_report(record["env"], record["jobs"]))
    failed = exact_failures(record)
    if failed:
        out.write(f"NOT bit-equal to eager: {', '.join(failed)}\n")
    return 1 if failed or any(job.get("error") for job in record["jobs"]) else 0


if __name__ == "__main__":
    sys.exit(main())
