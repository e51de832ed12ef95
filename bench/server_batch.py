"""The batch benchmark's job on a stock server, prompt by prompt (issue #54): ``python -m bench.server_batch``.

    python -m bench.server_batch --model zimage --prompts 100 --sizes 512x512,768x512,512x768
    python -m bench.server_batch --cpu                      # smoke test without CUDA

The job :mod:`bench.batch` samples in one process, submitted to a stock ``python main.py`` server
(``bench.comfy_base.stock_copy``: no other custom nodes, this pack linked in) the way a headless
batch client submits it: the same prompt-length draw (:func:`bench.batch.prompt_lengths`, 10 to
200 tokens, seeded), the sizes rotated over the prompts, no warm-up node. The whole batch runs once
eagerly (BCG Apply bypassed: each prompt's twin), then, after ``POST /free``, once through BCG
Apply (auto, capture on first call), and every BCG latent is compared bit for bit with its twin's;
then, freed again, once more eagerly (``--no-eager-after`` leaves it out), so eager is timed on both
sides of BCG's pass: what the first pass pays that a later one does not shows as their difference.
Conditioning comes from LoadTrainingDataset, one dataset per distinct length (no text encoder).

Reported (and written to ``--json`` with every prompt's record): the end-to-end speed-up (the sum
of eager wall seconds over BCG's), the per-prompt medians, the DiT calls replayed, the images
bit-equal, the first BCG prompt's cost.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import signal
import statistics
import sys
import tempfile
from pathlib import Path

from bcg_runtime.plan import PlanError, parse_resolutions

from . import comfy_base, comfy_workflow, synthetic
from .batch import prompt_lengths
from .comfy_server import TEST_ONLY_ENV, ComfyServer, cuda_available, free_port
from .server import NO_CUDA, comfyui_path, comfyui_version, compare, free_server, measure_prompt, variant_prompt
from .setup import DEFAULTS

log = logging.getLogger("bench.server_batch")
#: The smoke test's job (``--cpu``): a depth-1 model at 64x64, lengths divided by this.
CPU_LENGTH_DIVISOR = 20


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.server_batch", description=__doc__.split("\n\n")[0])
    p.add_argument("--comfyui", default=None, help="ComfyUI folder to copy (default: $COMFYUI_PATH)")
    p.add_argument(
        "--model", default="zimage", help=f"FAMILY[:WEIGHTS], weights {', '.join(comfy_base.WEIGHT_FORMATS)}"
    )
    p.add_argument("--prompts", type=int, default=None, help="prompts in the batch (default 100; 3 with --cpu)")
    p.add_argument("--sizes", default=None, help="WIDTHxHEIGHT list rotated over the prompts (default bench.batch's)")
    p.add_argument("--steps", type=int, default=None, help="sampling steps (default: the family's; 2 with --cpu)")
    p.add_argument("--cfg", type=float, default=None, help="cfg (default: the family's)")
    p.add_argument("--depth", type=int, default=None, help="blocks per stack (default: full; 1 with --cpu)")
    p.add_argument("--seed", type=int, default=0, help="seed of the length draw; prompt i samples seed --seed*10000+i")
    p.add_argument("--timeout", type=float, default=900, help="seconds one prompt may take")
    p.add_argument("--json", default="bench_out/server_batch.json", help="write everything here")
    p.add_argument("--cpu", action="store_true", help="smoke test without CUDA: tiny model, few prompts")
    p.add_argument(
        "--no-eager-after",
        dest="eager_after",
        action="store_false",
        help="leave out the eager pass after BCG's (by default eager runs before and after BCG)",
    )
    args = p.parse_args(argv)
    args.family, _, args.weights = args.model.partition(":")
    args.weights = args.weights or "bf16"
    if args.family not in DEFAULTS or args.weights not in comfy_base.WEIGHT_FORMATS:
        p.error(f"--model: {args.model!r} is not FAMILY[:WEIGHTS] (weights {', '.join(comfy_base.WEIGHT_FORMATS)})")
    smoke = args.cpu
    args.prompts = args.prompts or (3 if smoke else 100)
    args.depth = args.depth or (1 if smoke else None)
    steps, cfg = DEFAULTS[args.family]
    args.steps, args.cfg = args.steps or (2 if smoke else steps), cfg if args.cfg is None else args.cfg
    try:
        args.size_list = parse_resolutions(args.sizes or ("64x64" if smoke else "512x512,768x512,512x768"))
    except PlanError as error:
        p.error(f"--sizes: {error}")
    return args


def jobs_of(args: argparse.Namespace) -> list[dict]:
    """The batch: one job per prompt, its length, size and seed (bench.batch's draw and rotation)."""
    divisor = CPU_LENGTH_DIVISOR if args.cpu else 1
    return [
        {
            "index": i,
            "tokens": max(1, n // divisor),
            "size": args.size_list[i % len(args.size_list)],
            "seed": args.seed * 10**4 + i,
        }  # fmt: skip
        for i, n in enumerate(prompt_lengths(args.prompts, args.seed))
    ]


def summarize(jobs: list[dict]) -> dict:
    """The batch's totals from its jobs' eager and BCG records. Each pass's first prompt loads the
    model (and BCG's captures its first graph): the totals count them, ``rest`` leaves them out."""
    eager = [j["eager"]["wall_s"] for j in jobs]
    bcg = [j["bcg"]["wall_s"] for j in jobs]
    calls = sum(j["bcg"].get("calls") or 0 for j in jobs)
    replayed = sum(j["bcg"].get("replayed") or 0 for j in jobs)
    rest = {"eager_rest_s": round(sum(eager[1:]), 3), "bcg_rest_s": round(sum(bcg[1:]), 3)}
    rest["speedup_rest"] = round(sum(eager[1:]) / sum(bcg[1:]), 3) if len(jobs) > 1 else None
    after = [j["eager_after"]["wall_s"] for j in jobs if "eager_after" in j]
    if len(after) == len(jobs):  # the eager pass after BCG's
        rest.update(eager_after_s=round(sum(after), 3), eager_after_rest_s=round(sum(after[1:]), 3),
                    speedup_after=round(sum(after) / sum(bcg), 3), median_eager_after_s=round(statistics.median(after), 3))  # fmt: skip
    return {
        "prompts": len(jobs), "distinct_lengths": len({j["tokens"] for j in jobs}),
        "eager_s": round(sum(eager), 3), "bcg_s": round(sum(bcg), 3), "speedup": round(sum(eager) / sum(bcg), 3),
        **rest, "median_eager_s": round(statistics.median(eager), 3), "median_bcg_s": round(statistics.median(bcg), 3),
        "first_eager_s": round(eager[0], 3), "first_bcg_s": round(bcg[0], 3), "dit_calls": calls, "replayed": replayed,
        "bit_equal": sum(bool(j["bit_equal"]) for j in jobs), "exact": sum(exact(j) for j in jobs),
        "eager_not_reproduced": sum(not j.get("eager_again_equal", True) for j in jobs),
    }  # fmt: skip


def format_summary(record: dict) -> str:
    """One paragraph; a CPU smoke test's says so and gives no speed-up."""
    s, env = record["summary"], record["env"]
    what = (
        f"server batch: {env['model']} on `python main.py` (ComfyUI {env['comfyui']}, {env.get('device', '?')}), "
        f"{s['prompts']} prompts of {s['distinct_lengths']} lengths over {env['sizes']}, {env['steps']} steps, cfg {env['cfg']}"
    )
    checks = f"replayed {s['replayed']}/{s['dit_calls']} DiT calls; bit-equal {s['bit_equal']}/{s['prompts']}"
    if s.get("eager_not_reproduced"):
        checks += (
            f" ({s['exact']} counting the {s['eager_not_reproduced']} whose first eager run ComfyUI did not "
            "reproduce and whose repeat BCG equals)"
        )
    if env["cpu_smoke"]:
        return f"smoke test, not a benchmark (no CUDA: every call eager, no speed to measure). {what}: {checks}"
    after = (
        f"; eager again after BCG's pass {s['eager_after_s']} s ({s['speedup_after']}x; without its first prompt "
        f"{s['eager_after_rest_s']} s, per prompt median {s['median_eager_after_s']} s)"
        if "eager_after_s" in s
        else ""
    )
    return (
        f"{what}: eager {s['eager_s']} s, BCG {s['bcg_s']} s, {s['speedup']}x end to end; without each pass's "
        f"first prompt (the model's load) eager {s['eager_rest_s']} s, BCG {s['bcg_rest_s']} s, {s['speedup_rest']}x; "
        f"per prompt median eager {s['median_eager_s']} s, BCG {s['median_bcg_s']} s (first prompt eager "
        f"{s['first_eager_s']} s, BCG {s['first_bcg_s']} s){after}; {checks}"
    )


def prepare(tree: Path, args: argparse.Namespace, jobs: list[dict], cuda: bool) -> str:
    """The model file and one conditioning dataset per distinct length; the model's file name."""
    name = f"bcg_server_batch_{args.family}_{args.weights}" + ("" if args.depth is None else f"_depth{args.depth}")
    unet = comfy_base.unet_file(name, args.weights)
    comfy_base.write_unet(args.family, tree / "models" / "diffusion_models" / unet, depth=args.depth,
                          weights=args.weights, device="cuda" if cuda else None)  # fmt: skip
    latents = [{"samples": synthetic.empty_latent(args.family, 64, 64).cpu()}]
    for length in sorted({j["tokens"] for j in jobs}):
        cond = [synthetic.make_conditioning(args.family, length, seed=length)]
        comfy_base.save_training_dataset(tree, f"bcg_batch_{args.family}_txt{length}", latents, cond)
    return unet


def run_batch(server: ComfyServer, unet: str, jobs: list[dict], args: argparse.Namespace) -> None:
    """Every job eagerly, then (models and node cache freed) every job through BCG Apply; then each
    job whose BCG latent differs from its eager twin runs eagerly once more (the model warm):
    stock ComfyUI does not always reproduce a server's first eager prompt, and the repeat says
    which of the two was the odd one (``bench.server.repeat_eager``). With ``args.eager_after`` an
    eager pass follows BCG's, timed only."""
    for variant in ("eager", "bcg") + (("eager_after",) if args.eager_after else ()):
        free_server(server)
        for job in jobs:
            kind = "eager" if variant == "eager_after" else variant
            rec, latent = measure_prompt(server, job_prompt(unet, job, kind, variant, args), args.timeout)
            job[variant] = {
                k: rec.get(k) for k in ("wall_s", "execution_s", "calls", "replayed", "eager", "reserved_mib")
            }
            if variant == "eager":
                job["_twin"] = latent
            elif variant == "bcg":
                job["bit_equal"], job["max_abs_diff"] = compare(latent, job["_twin"])
                if job["bit_equal"]:
                    del job["_twin"]  # only a differing job's twin is needed again
                else:
                    job["_bcg"] = latent
            log.info("[BCG] %s prompt %d %s txt%d: %.3f s%s", variant, job["index"], "x".join(map(str, job["size"])),
                     job["tokens"], job[variant]["wall_s"],
                     "" if kind == "eager" else f", replayed {job[variant]['replayed']}/{job[variant]['calls']}, bit-equal {job['bit_equal']}")  # fmt: skip
    for job in jobs:
        if "_bcg" in job:
            rec, latent = measure_prompt(server, job_prompt(unet, job, "eager", "eager_again", args), args.timeout)
            job["eager_again_equal"] = compare(latent, job.pop("_twin"))[0]
            job["bit_equal_to_eager_again"] = compare(job.pop("_bcg"), latent)[0]
            log.info("[BCG] eager again, prompt %d: %s the first eager run; BCG's latent %s it",
                     job["index"], "equal to" if job["eager_again_equal"] else "DIFFERS from",
                     "equals" if job["bit_equal_to_eager_again"] else "DIFFERS from")  # fmt: skip


def job_prompt(unet: str, job: dict, variant: str, name: str, args: argparse.Namespace) -> dict:
    """The API prompt of ``job`` as ``variant`` (eager: BCG Apply bypassed), its outputs under ``name``."""
    base = comfy_workflow.latent_workflow(
        unet, f"bcg_batch_{args.family}_txt{job['tokens']}", job["size"], args.steps, job["seed"],
        prefix="bcg_server_batch/x", capture="on first call", family=args.family,
    )  # fmt: skip
    comfy_workflow.set_sampler(base, cfg=args.cfg)
    if args.weights in comfy_base.GGUF_TYPES:
        comfy_workflow.with_gguf_loader(base)
    return variant_prompt(base, variant, f"bcg_server_batch/{name}_{job['index']}", job["seed"])


def exact(job: dict) -> bool:
    """BCG's latent equals its eager twin, or the twin was the odd one: run again, eager equals
    BCG's latent and not its own first run."""
    return bool(job.get("bit_equal")) or (
        job.get("bit_equal_to_eager_again", False) and not job.get("eager_again_equal", True)
    )


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a time limit unwinds: the server stops
    args = parse_args(argv)
    cuda = not args.cpu and cuda_available()
    if not args.cpu and not cuda:
        sys.stderr.write(NO_CUDA.replace("bench.server", "bench.server_batch") + "\n")
        return 2
    work = Path(tempfile.mkdtemp(prefix="bcg_server_batch_"))
    tree = work / "ComfyUI"
    comfy_base.server_tree(comfyui_path(args.comfyui), tree, gguf=args.weights in comfy_base.GGUF_TYPES)
    comfy_base.import_comfyui(tree, cpu=not cuda)
    jobs = jobs_of(args)
    record = {
        "env": {"model": args.model, "comfyui": comfyui_version(tree), "cpu_smoke": args.cpu, "steps": args.steps,
                "cfg": args.cfg, "sizes": ",".join("x".join(map(str, s)) for s in args.size_list), "seed": args.seed},
        "jobs": jobs,
    }  # fmt: skip
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    server = None
    try:
        unet = prepare(tree, args, jobs, cuda)
        server = ComfyServer(tree, cuda=cuda, env=dict.fromkeys(TEST_ONLY_ENV), bare=True,
                             port=None if cuda else free_port(), log_path=Path(args.json).parent / "server_batch.log")  # fmt: skip
        server.start(timeout=600)
        from bcg_client import comfy_http

        record["env"]["device"] = comfy_http.http_json(server.url, "/system_stats")["devices"][0]["name"]
        run_batch(server, unet, jobs, args)
        record["summary"] = summarize(jobs)
    finally:
        if server is not None:
            server.stop()
        for job in jobs:
            job.pop("_twin", None)
            job.pop("_bcg", None)
        Path(args.json).write_text(json.dumps(record, indent=1, default=str))
        shutil.rmtree(work, ignore_errors=True)
    sys.stdout.write(format_summary(record) + f"\nWritten: {Path(args.json).resolve()}\n")
    return 0 if record["summary"]["exact"] == len(jobs) else 1


if __name__ == "__main__":
    sys.exit(main())
