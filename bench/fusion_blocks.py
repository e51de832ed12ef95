"""Whole DiT blocks compiled by inductor so that they might keep eager's bits, checked bit for bit
against the block as ComfyUI runs it (issue #57's map, block by block): ``python -m bench.fusion_blocks``.

:mod:`bench.fusion_map` asks the question chain by chain; this asks it where a capture strategy
would act: on each repeated block of the real model (ComfyUI's own classes at full width, random
weights in the checkpoint layout, loaded by ComfyUI's loader, one block per list), fed the inputs
it receives during a real KSampler step. The block is compiled the way mode fast compiles it
(``bcg_runtime.comfy.fast.RegionalCompile``: comfy_quant layers opaque to dynamo), with
inductor rounding every intermediate where eager does (``emulate_precision_casts``), in three
levels of caution:

- ``fused``: everything inductor lowers (norms and linear layers included);
- ``norms eager``: LayerNorm and RMSNorm modules opaque, so their reductions run eager's kernels;
- ``norms, linears eager``: Linear layers opaque too, so inductor fuses only the elementwise
  glue between eager's own kernels.

A level is exact only when every trial's outputs are ``torch.equal`` to eager's (the real inputs,
then the hidden states scaled by 0.1 and 10). Times are GPU microseconds per block call from
CUDA-graph replays; the saving per forward multiplies by the real depth. Without CUDA it runs at a
reduced size as a smoke test of this tool (the first line says so).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
from typing import Any, Iterator

import torch
from torch.utils._pytree import tree_leaves, tree_map

from . import fusion_map

log = logging.getLogger(__name__)

LEVELS = ("fused", "norms eager", "norms, linears eager")
SMOKE_LINE = "smoke test, not a map: no CUDA, reduced size; exactness and times here say nothing about a GPU"


def _clone(value: Any) -> Any:
    return tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, value)


def _opaque_for(block: torch.nn.Module, level: str) -> list[torch.nn.Module]:
    """The block's modules that run eagerly, opaque to dynamo, at ``level``."""
    from bcg_runtime.comfy.api import is_quantized_layer

    def is_norm(m):
        return "Norm" in type(m).__name__

    def is_linear(m):
        return isinstance(m, torch.nn.Linear)

    keep = {
        "fused": lambda m: False,
        "norms eager": is_norm,
        "norms, linears eager": lambda m: is_norm(m) or is_linear(m),
    }[level]
    return [m for m in block.modules() if m is not block and (is_quantized_layer(m) or keep(m))]


@contextlib.contextmanager
def compiled_at(block: torch.nn.Module, level: str) -> Iterator[Any]:
    """``block`` compiled with eager's rounding points, the modules of ``level`` opaque for the duration."""
    from bcg_runtime.comfy.api import opaque_to_dynamo, skip_transformer_options

    compiled = torch.compile(
        block,
        dynamic=False,
        options={"emulate_precision_casts": True, "guard_filter_fn": skip_transformer_options},
    )
    with opaque_to_dynamo(_opaque_for(block, level)), torch._dynamo.config.patch(recompile_limit=64):
        yield compiled


def _scaled(args: tuple, kwargs: dict, factor: float) -> tuple[tuple, dict]:
    """The inputs with every floating tensor of three or more dimensions (the hidden states)
    scaled by ``factor``; embeddings, modulation vectors and masks kept."""

    def scale(t):
        if isinstance(t, torch.Tensor) and t.is_floating_point() and t.dim() >= 3 and t.shape[1] > 64:
            return t * factor
        return t

    return tree_map(scale, _clone(args)), tree_map(scale, _clone(kwargs))


def _equal(a: Any, b: Any) -> tuple[bool, float]:
    la = [t for t in tree_leaves(a) if isinstance(t, torch.Tensor)]
    lb = [t for t in tree_leaves(b) if isinstance(t, torch.Tensor)]
    if len(la) != len(lb) or any(x.shape != y.shape or x.dtype != y.dtype for x, y in zip(la, lb)):
        return False, float("nan")
    same = all(torch.equal(x, y) for x, y in zip(la, lb))
    diff = 0.0 if same else max((x.float() - y.float()).abs().max().item() for x, y in zip(la, lb))
    return same, diff


def study_block(block: torch.nn.Module, args: tuple, kwargs: dict, levels=LEVELS) -> dict:
    """Eager's GPU time and, per level, whether the compiled block equals eager on every trial
    and its time."""

    def run(fn, a, k):
        a, k = _clone(a), _clone(k)  # blocks add into their inputs in place
        return fn(*a, **k)

    trials = [_clone((args, kwargs))] + [_scaled(args, kwargs, f) for f in (0.1, 10.0)]
    # Timing runs add into their inputs again and again: they get a copy of their own.
    timing_args, timing_kwargs = _clone((args, kwargs))
    cuda = _first_tensor(args, kwargs).is_cuda
    with torch.no_grad():
        truth = [run(block, a, k) for a, k in trials]
        row = {"eager_us": round(fusion_map.gpu_us(lambda: block(*timing_args, **timing_kwargs), cuda), 2)}
        for level in levels:
            try:
                with compiled_at(block, level) as compiled:
                    results = [_equal(run(compiled, a, k), t) for (a, k), t in zip(trials, truth)]
                    us = fusion_map.gpu_us(lambda: compiled(*timing_args, **timing_kwargs), cuda)
                row[level] = {
                    "equal": sum(ok for ok, _ in results),
                    "trials": len(results),
                    "max_diff": max(d for _, d in results),
                    "us": round(us, 2),
                }
            except Exception as error:  # a level that cannot compile is a finding, not a crash
                row[level] = {"error": f"{type(error).__name__}: {str(error)[:200]}"}
            torch._dynamo.reset()
    return row


def _first_tensor(args, kwargs) -> torch.Tensor:
    return next(t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor))


def study_family(family: str, weight_dtype: str, size: int, steps: int = 1) -> list[dict]:
    """Each repeated block list's first block of ``family``, studied on the inputs it gets in the
    first step of a real KSampler run at ``size``²."""
    from bcg_runtime.comfy.api import repeated_block_lists

    from . import synthetic
    from .setup import load_bench_model

    info = synthetic.family_info(family)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_bench_model(family, 1, weight_dtype, device)
    dm = model.model.diffusion_model
    rows: list[dict] = []
    lists = repeated_block_lists(dm)
    lists_by_name = dict(lists)  # a list the depth does not reduce (Z-Image's refiners) keeps its length
    depths = dict(zip(info.block_attrs, info.real_depth if isinstance(info.real_depth, tuple) else (info.real_depth,)))

    seen: set[str] = set()  # lists studied or being studied (the study calls the block again)

    def hook_for(name: str, block: torch.nn.Module):
        def hook(module, args, kwargs):
            if name in seen:
                return None
            seen.add(name)
            tensors = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor) and t.dim() >= 3]
            tokens = max((t.shape[1] for t in tensors), default=0)
            log.info("[BCG] %s %s: %s, %d tokens", family, weight_dtype, name, tokens)
            row = {"family": family, "weights": weight_dtype, "blocks": name, "tokens": tokens,
                   "per_forward": depths.get(name, len(lists_by_name[name])), **study_block(module, args, kwargs)}  # fmt: skip
            rows.append(row)
            return None

        return block.register_forward_pre_hook(hook, with_kwargs=True)

    handles = [hook_for(name, blocks[0]) for name, blocks in lists]
    try:
        length = info.prompt_lengths[0]
        positive = synthetic.make_conditioning(family, length, seed=1)
        negative = synthetic.make_conditioning(family, length, seed=2)
        synthetic.sample(model, family, size, size, steps, 1.0, positive, negative, seed=7)
    finally:
        for handle in handles:
            handle.remove()
    return rows


def format_blocks(rows: list[dict], smoke: bool) -> str:
    lines = [SMOKE_LINE, ""] if smoke else []
    lines += [
        "| model | weights | block | tokens | per forward | eager µs | " + " | ".join(LEVELS) + " |",
        "|---|---|---|---|---|---|" + "---|" * len(LEVELS),
    ]
    for r in rows:
        cells = []
        for level in LEVELS:
            c = r.get(level, {})
            if "error" in c:
                cells.append("failed: " + c["error"][:80].replace("|", "/"))
            elif c:
                verdict = (
                    "exact"
                    if c["equal"] == c["trials"]
                    else f"not exact ({c['equal']}/{c['trials']}, max diff {c['max_diff']:.3g})"
                )
                saving = (r["eager_us"] - c["us"]) * r["per_forward"] / 1000
                cells.append(f"{verdict}, {c['us']} µs ({saving:+.2f} ms / forward)")
            else:
                cells.append("-")
        lines.append(
            f"| {r['family']} | {r['weights']} | {r['blocks']} | {r['tokens']} | {r['per_forward']} | {r['eager_us']} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from .setup import WEIGHT_DTYPES, setup_comfyui

    parser = argparse.ArgumentParser(prog="python -m bench.fusion_blocks", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--comfyui", default=os.environ.get("COMFYUI_PATH"), help="ComfyUI folder (default: $COMFYUI_PATH)"
    )
    parser.add_argument("--runs", default="flux:default,flux:comfy_quant_fp8,qwen_image:default,zimage:default",
                        help="family:weight-dtype list (default: FLUX.1 as stored (bf16) and comfy_quant fp8, Qwen-Image, Z-Image)")  # fmt: skip
    parser.add_argument("--size", type=int, default=1024, help="image side in pixels (default 1024; 256 without CUDA)")
    parser.add_argument("--json", default="", help="also write the rows to this file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    version = setup_comfyui(args.comfyui)
    cuda = torch.cuda.is_available()
    size = args.size if cuda else min(args.size, 256)
    rows = []
    for run in args.runs.split(","):
        family, _, weights = run.strip().partition(":")
        if (weights or "default") not in WEIGHT_DTYPES:
            raise SystemExit(f"--runs: unknown weight dtype {weights!r} in {run!r} (one of {sorted(WEIGHT_DTYPES)})")
        rows += study_family(family, weights or "default", size)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"size": size, "comfyui": version, "torch": torch.__version__,
                       "device": torch.cuda.get_device_name() if cuda else "cpu", "rows": rows}, f, indent=1)  # fmt: skip
    print(format_blocks(rows, smoke=not cuda))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
