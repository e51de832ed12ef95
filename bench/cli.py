"""Benchmark: eager ComfyUI vs BCG vs torch.compile on one synthetic model, in one process.

    python -m bench --comfyui /path/to/ComfyUI            # Z-Image-Turbo 512², 8 steps
    python -m bench --family flux --resolutions 512x512,1024x1024 --steps 20 \\
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
import logging
import os

from .measure import run
from .modes import ATTENTION_STACK, CACHE_STACK, MODES
from .recipes import RECIPES
from .report import format_host_profiles, format_kernel_split, format_table, format_warmup_costs, write_json
from .setup import CPU_NOTE, DEFAULTS, WEIGHT_DTYPES


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--comfyui",
        default=os.environ.get("COMFYUI_PATH"),
        help="ComfyUI folder (default: $COMFYUI_PATH, or the ComfyUI this pack is installed in)",
    )
    p.add_argument(
        "--family",
        default="zimage",
        choices=sorted(DEFAULTS),
        help="model family (default zimage = Z-Image-Turbo; "
        + ", ".join(f"{n} = {r.title}" for n, r in sorted(RECIPES.items()))
        + ")",
    )
    p.add_argument(
        "--resolutions",
        default=None,
        help="WIDTHxHEIGHT list, WIDTHxHEIGHTxFRAMES for video families (default 512x512; 128x128 without CUDA)",
    )
    p.add_argument("--steps", type=int, default=None, help="sampling steps (default: the family's recipe)")
    p.add_argument("--cfg", type=float, default=None, help="cfg (default: the family's)")
    p.add_argument(
        "--prompt-lengths",
        default=None,
        help="cond,uncond context lengths (default: 100 and 12 typed tokens as the family's text encoder delivers them, e.g. 256,256 for flux, whose T5 pads to 256)",
    )
    p.add_argument(
        "--references",
        default=None,
        help="edit workflow: reference images as WIDTHxHEIGHT list (e.g. 1024x1024 for Qwen-Image-Edit or FLUX.1 Kontext), each a random latent in cond and uncond's reference_latents",
    )
    p.add_argument(
        "--weight-dtype",
        default="default",
        choices=sorted(WEIGHT_DTYPES),
        help="UNETLoader's weight_dtype: fp8_e4m3fn / fp8_e5m2 store the weights in fp8 and cast them in every forward; comfy_quant_fp8 / comfy_quant_nvfp4: a mixed-precision checkpoint, the blocks' Linear layers in scaled fp8 / nvfp4 (comfy_quant_mixed: nvfp4, the first and last block fp8), run as fp8 / fp4 matmuls where the GPU has them (every mode runs that model); gguf_*: a GGUF file of that quant type loaded by ComfyUI-GGUF (BCG_PACKS_PATH)",
    )
    p.add_argument(
        "--modes",
        default=None,
        help=f"comma list of {','.join(MODES)} (default eager,bcg,bcg-full,compile-cudagraphs; eager without CUDA); a mode may stack an attention backend ({', '.join(ATTENTION_STACK)}) and a step cache ({', '.join(CACHE_STACK)}) in front: sage+bcg-full, easycache+bcg-full, sage+easycache (= eager with both); a BCG mode also a compile mode: compile-inductor+bcg-full (BCG steps aside, the row says why); a mode listed twice runs twice, its second row compared with its first (compile-inductor,compile-inductor: is a second compile bit-equal?)",
    )
    p.add_argument("--repeats", type=int, default=3, help="timed runs per mode after one warm run (median reported)")
    p.add_argument("--depth", type=int, default=None, help="blocks per stack (default: full on CUDA, 1 without)")
    p.add_argument("--json", default=None, help="write every row (and the environment) as JSON here")
    p.add_argument("--no-profile", action="store_true", help="skip the profiler run (no kernel time / busy)")
    p.add_argument(
        "--host-profile",
        type=int,
        default=0,
        metavar="N",
        help="also run one denoise per mode under cProfile and keep its N functions with the most own time in the JSON (host_top), and its function calls (host_calls): where a host-bound mode's time goes",
    )
    p.add_argument(
        "--warmup-cost",
        default=None,
        metavar="RESOLUTIONS:TEXT_BUCKETS",
        help="for each BCG mode in --modes, also time one BCG Apply warm-up of this whole plan on a fresh model (e.g. 512x512,1024x1024:128,256 = 2 sizes x 2 prompt lengths): compile + capture seconds and graphs captured",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    import torch

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print(f"smoke test, not a benchmark: {CPU_NOTE}", flush=True)
    rows, env = run(args)
    if args.json:
        write_json(args.json, env, rows)
    workflow = f" references={','.join(env['references'])}" if env.get("references") else ""
    workflow += f" weights={env['weight_dtype']}" if env.get("weight_dtype", "default") != "default" else ""
    print(
        f"\n{env['family']} depth={env['depth']} steps={env['steps']} cfg={env['cfg']}{workflow} on {env['gpu']}, torch {env['torch']}, ComfyUI {env['comfyui']}"
    )
    if env["note"]:
        print(env["note"])
    print(format_table(rows, smoke=env["note"] is not None))
    if any(r.kernel_split for r in rows):
        print("\nGPU seconds per denoise by kernel kind\n" + format_kernel_split(rows))
    if any(r.host_top is not None for r in rows):
        print(
            "\nPython side of one denoise (cProfile: calls, own seconds, costliest functions)\n"
            + format_host_profiles(rows)
        )
    for line in format_warmup_costs(env):
        print(line)
    return 1 if any(r.error for r in rows) or any("error" in c for c in env.get("warmup_cost", [])) else 0
