"""Which elementwise chains of a DiT forward can run fused and still write eager's bits, and what
fusing each would save (issue #57's map): ``python -m bench.fusion_map``.

Each :class:`Pattern` is one chain as ComfyUI 0.33.0's forward writes it (``comfy/ldm/flux/layers.py``,
``comfy/ldm/qwen_image/model.py``, ``comfy/ldm/lumina/model.py``, comfy_quant fp8 linears in
``comfy/ops.py``): its ``eager`` function calls the same torch and comfy-kitchen ops in the same
order. Its candidates are fused forms of it: inductor (``torch.compile`` with
``emulate_precision_casts``, which rounds every intermediate to the storage dtype where eager does),
and comfy-kitchen's own fused kernels where it ships one (``adaln``, ``rms_rope``). A candidate is
*exact* only when ``torch.equal`` holds against eager on every trial (fresh random inputs, scaled
over four decades, at each model's real shapes); anything less is reported with its trials and
largest difference, never rounded to "close". Time is GPU time per call from CUDA-graph replays
(no launch gaps), so the saving is kernel time alone; a :class:`Site` says how often a forward runs
the chain, which turns it into milliseconds per forward.

Without CUDA the same code runs on the CPU at reduced sizes: a smoke test of this tool, whose
exactness and times say nothing about a GPU (the first line says so).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import time
import zlib
from typing import Callable, NamedTuple

import torch
import torch.nn.functional as F

log = logging.getLogger(__name__)

SMOKE_LINE = "smoke test, not a map: no CUDA, reduced sizes; exactness and times here say nothing about a GPU"


class Shape(NamedTuple):
    """The sizes one site runs at: ``tokens`` rows of ``dim`` features; ``hidden`` the MLP width;
    ``heads`` x 128 for the attention sites."""

    tokens: int
    dim: int
    hidden: int = 0
    heads: int = 0


class Pattern(NamedTuple):
    name: str
    #: The chain as the model writes it, for the table.
    what: str
    #: (shape, generator, device, magnitude) -> the chain's inputs.
    inputs: Callable[..., tuple]
    eager: Callable[..., object]
    #: name -> the fused form (None where its kernel library is missing).
    candidates: dict[str, Callable[..., object] | None]


class Site(NamedTuple):
    model: str
    pattern: str
    where: str
    shape: Shape
    #: How many times one forward (one DiT call) runs the chain here.
    per_forward: int


def _bf16(gen, device, magnitude, *size) -> torch.Tensor:
    return (torch.randn(*size, generator=gen, device=device, dtype=torch.float32) * magnitude).to(torch.bfloat16)


def _ck():
    try:
        import comfy_kitchen

        return comfy_kitchen
    except ImportError:
        return None


# --- the chains, as ComfyUI 0.33.0 writes them ---------------------------------------------------


def _modulate_inputs(shape, gen, device, magnitude):
    x = _bf16(gen, device, magnitude, 1, shape.tokens, shape.dim)
    return x, _bf16(gen, device, 0.5, 1, 1, shape.dim), _bf16(gen, device, 0.5, 1, 1, shape.dim)


def layernorm_modulate(x, scale, shift):
    """FLUX ``apply_mod(img_norm1(img), 1 + scale, shift)``, Qwen-Image ``_modulate(img_norm1(x))``."""
    return torch.addcmul(shift, F.layer_norm(x, (x.shape[-1],), None, None, 1e-6), 1 + scale)


def _gate_inputs(shape, gen, device, magnitude):
    x = _bf16(gen, device, magnitude, 1, shape.tokens, shape.dim)
    return x, _bf16(gen, device, magnitude, 1, shape.tokens, shape.dim), _bf16(gen, device, 0.5, 1, 1, shape.dim)


def gate_residual(x, y, gate):
    """FLUX ``img += apply_mod(proj(attn), gate)``, Qwen-Image's txt stream ``x + gate * y``
    (out of place here: the same two kernels, the same bits)."""
    return x + y * gate


def _gelu_cat_inputs(shape, gen, device, magnitude):
    attn = _bf16(gen, device, magnitude, 1, shape.tokens, shape.dim)
    return attn, _bf16(gen, device, magnitude, 1, shape.tokens, shape.hidden)


def gelu_cat(attn, mlp):
    """FLUX single block: ``linear2(torch.cat((attn, gelu_tanh(mlp)), 2))``'s input."""
    return torch.cat((attn, F.gelu(mlp, approximate="tanh")), 2)


def _qk_inputs(shape, gen, device, magnitude):
    q = _bf16(gen, device, magnitude, 1, shape.heads, shape.tokens, 128)
    k = _bf16(gen, device, magnitude, 1, shape.heads, shape.tokens, 128)
    wq, wk = _bf16(gen, device, 1.0, 128), _bf16(gen, device, 1.0, 128)
    angles = torch.rand(1, 1, shape.tokens, 64, generator=gen, device=device) * 6.2832
    cos, sin = torch.cos(angles), torch.sin(angles)
    pe = torch.stack([cos, -sin, sin, cos], dim=-1).reshape(1, 1, shape.tokens, 64, 2, 2)
    return q, k, wq, wk, pe


def _rope_torch(x, freqs):
    """ComfyUI's ``_apply_rope1`` (its training path; inference calls comfy-kitchen's kernel)."""
    x_ = x.to(dtype=freqs.dtype).reshape(*x.shape[:-1], -1, 1, 2)
    out = freqs[..., 0] * x_[..., 0] + freqs[..., 1] * x_[..., 1]
    return out.reshape(*x.shape).type_as(x)


def qk_norm_rope(q, k, wq, wk, pe):
    """FLUX ``QKNorm`` (RMSNorm, eps None) then ``apply_rope`` (comfy-kitchen where installed)."""
    q = F.rms_norm(q, (128,), wq, None)
    k = F.rms_norm(k, (128,), wk, None)
    ck = _ck()
    if ck is not None:
        return ck.apply_rope(q, k, pe)
    return _rope_torch(q, pe), _rope_torch(k, pe)


def _rms_gate_inputs(shape, gen, device, magnitude):
    x, y, gate = _gate_inputs(shape, gen, device, magnitude)
    return x, y, gate, _bf16(gen, device, 1.0, shape.dim)


def rmsnorm_tanh_gate_residual(x, y, gate, weight):
    """Z-Image ``x + apply_gate(gate.tanh(), attention_norm2(attn_out))``."""
    return x + gate.tanh() * F.rms_norm(y, (y.shape[-1],), weight, 1e-5)


def _rms_mod_inputs(shape, gen, device, magnitude):
    x, scale, _ = _modulate_inputs(shape, gen, device, magnitude)
    return x, scale, _bf16(gen, device, 1.0, shape.dim)


def rmsnorm_modulate(x, scale, weight):
    """Z-Image ``modulate(attention_norm1(x), scale)`` = ``rms_norm(x) * (1 + scale)``."""
    return F.rms_norm(x, (x.shape[-1],), weight, 1e-5) * (1 + scale)


def _silu_inputs(shape, gen, device, magnitude):
    return _bf16(gen, device, magnitude, 1, shape.tokens, shape.hidden), _bf16(
        gen, device, magnitude, 1, shape.tokens, shape.hidden
    )


def silu_mul(x1, x3):
    """Z-Image ``FeedForward._forward_silu_gating``: ``silu(w1(x)) * w3(x)``."""
    return F.silu(x1) * x3


def _quantize(h, scale):
    """comfy_quant fp8's input quantization (``TensorCoreFP8Layout.quantize``, no stochastic rounding)."""
    ck = _ck()
    if ck is not None:
        return ck.quantize_per_tensor_fp8(h, scale, torch.float8_e4m3fn)
    return _torch_quantize(h, scale)


def _modulate_quant_inputs(shape, gen, device, magnitude):
    return (*_modulate_inputs(shape, gen, device, magnitude), torch.ones((), device=device))


def modulate_quantize(x, scale, shift, input_scale):
    """FLUX fp8: the modulated input quantized by the qkv / linear1 comfy_quant layer."""
    return _quantize(layernorm_modulate(x, scale, shift).reshape(-1, x.shape[-1]), input_scale)


def _gelu_quant_inputs(shape, gen, device, magnitude):
    return _bf16(gen, device, magnitude, 1, shape.tokens, shape.hidden), torch.ones((), device=device)


def gelu_quantize(h, input_scale):
    """FLUX fp8 double block: ``img_mlp``'s GELU output quantized by its second linear."""
    return _quantize(F.gelu(h, approximate="tanh").reshape(-1, h.shape[-1]), input_scale)


# --- the fused forms -----------------------------------------------------------------------------


def inductor(fn: Callable) -> Callable:
    """``fn`` compiled by inductor, rounding where eager rounds (``emulate_precision_casts``)."""
    return torch.compile(fn, dynamic=False, options={"emulate_precision_casts": True})


def _ck_adaln(x, scale, shift):
    return _ck().adaln(x, scale, shift, 1e-6)


def _ck_rms_rope(q, k, wq, wk, pe):
    return _ck().rms_rope(q, k, pe, wq, wk, torch.finfo(torch.bfloat16).eps)


def _after_norm(fused_gate: Callable) -> Callable:
    """Z-Image's gate with its norm eager and the gate and residual one fused kernel."""

    def run(x, y, gate, weight):
        return fused_gate(x, F.rms_norm(y, (y.shape[-1],), weight, 1e-5), gate.tanh())

    return run


def _torch_quantize(h, input_scale):
    return torch.clamp(h * (1.0 / input_scale).to(h.dtype), -448.0, 448.0).to(torch.float8_e4m3fn)


def _rope_norm_torch(q, k, wq, wk, pe):
    return _rope_torch(F.rms_norm(q, (128,), wq, None), pe), _rope_torch(F.rms_norm(k, (128,), wk, None), pe)


def _candidates() -> dict[str, dict[str, Callable | None]]:
    ck = _ck()
    return {
        "layernorm_modulate": {
            "inductor": inductor(layernorm_modulate),
            "comfy-kitchen adaln": _ck_adaln if ck else None,
        },
        "gate_residual": {"inductor": inductor(gate_residual)},
        "gelu_cat": {"inductor": inductor(gelu_cat)},
        "qk_norm_rope": {
            "comfy-kitchen rms_rope": _ck_rms_rope if ck else None,
            "inductor (torch rope)": inductor(_rope_norm_torch),
        },
        "rmsnorm_tanh_gate_residual": {
            "inductor": inductor(rmsnorm_tanh_gate_residual),
            "inductor after the norm": _after_norm(inductor(gate_residual)),
        },
        "rmsnorm_modulate": {"inductor": inductor(rmsnorm_modulate)},
        "silu_mul": {"inductor": inductor(silu_mul)},
        "modulate_quantize": {
            "inductor (torch quantize)": inductor(
                lambda x, s, b, i: _torch_quantize(layernorm_modulate(x, s, b).reshape(-1, x.shape[-1]), i)
            )
        },
        "gelu_quantize": {
            "inductor (torch quantize)": inductor(
                lambda h, i: _torch_quantize(F.gelu(h, approximate="tanh").reshape(-1, h.shape[-1]), i)
            )
        },
    }


def patterns() -> dict[str, Pattern]:
    """Every chain with its fused forms (compiling lazily: inductor compiles on first call)."""
    table = [
        ("layernorm_modulate", "addcmul(shift, layer_norm(x), 1 + scale)", _modulate_inputs, layernorm_modulate),
        ("gate_residual", "x + y * gate", _gate_inputs, gate_residual),
        ("gelu_cat", "cat((attn, gelu_tanh(mlp)), -1)", _gelu_cat_inputs, gelu_cat),
        ("qk_norm_rope", "rms_norm(q), rms_norm(k), apply_rope", _qk_inputs, qk_norm_rope),
        ("rmsnorm_tanh_gate_residual", "x + tanh(gate) * rms_norm(y)", _rms_gate_inputs, rmsnorm_tanh_gate_residual),
        ("rmsnorm_modulate", "rms_norm(x) * (1 + scale)", _rms_mod_inputs, rmsnorm_modulate),
        ("silu_mul", "silu(x1) * x3", _silu_inputs, silu_mul),
        (
            "modulate_quantize",
            "fp8 quantize(addcmul(shift, layer_norm(x), 1 + scale))",
            _modulate_quant_inputs,
            modulate_quantize,
        ),
        ("gelu_quantize", "fp8 quantize(gelu_tanh(h))", _gelu_quant_inputs, gelu_quantize),
    ]
    candidates = _candidates()
    return {name: Pattern(name, what, inputs, eager, candidates[name]) for name, what, inputs, eager in table}


def sites(size: int) -> list[Site]:
    """Where each chain runs in one forward at ``size``² (2x2 patches of an 8x latent: ``(size/16)²``
    image tokens), with the recipes' text lengths and the real depths."""
    img = (size // 16) ** 2
    flux, fluxt = Shape(img, 3072, 12288, 24), Shape(256, 3072, 12288, 24)
    single = Shape(img + 256, 3072, 12288, 24)
    qwen, qwent = Shape(img, 3072, 12288, 24), Shape(128, 3072, 12288, 24)
    zimg = Shape(img + 128, 3840, 10240, 30)
    out = []
    for model in ("flux", "flux fp8"):
        out += [
            Site(model, "layernorm_modulate", "double img x2", flux, 19 * 2),
            Site(model, "layernorm_modulate", "double txt x2", fluxt, 19 * 2),
            Site(model, "layernorm_modulate", "single", single, 38),
            Site(model, "gate_residual", "double img x2", flux, 19 * 2),
            Site(model, "gate_residual", "double txt x2", fluxt, 19 * 2),
            Site(model, "gate_residual", "single", single, 38),
            Site(model, "qk_norm_rope", "double img", flux, 19),
            Site(model, "qk_norm_rope", "single", single, 38),
            Site(model, "gelu_cat", "single", single, 38),
        ]
    out += [
        Site("flux fp8", "modulate_quantize", "double img x2", flux, 19 * 2),
        Site("flux fp8", "modulate_quantize", "single", single, 38),
        Site("flux fp8", "gelu_quantize", "double img", flux, 19),
        Site("qwen_image", "layernorm_modulate", "img x2", qwen, 60 * 2),
        Site("qwen_image", "layernorm_modulate", "txt x2", qwent, 60 * 2),
        Site("qwen_image", "gate_residual", "txt attn", qwent, 60),
        Site("zimage", "rmsnorm_modulate", "x2", zimg, 30 * 2),
        Site("zimage", "rmsnorm_tanh_gate_residual", "x2", zimg, 30 * 2),
        Site("zimage", "silu_mul", "ffn", zimg, 30),
    ]
    return out


# --- measuring -----------------------------------------------------------------------------------


class Verdict(NamedTuple):
    equal: int
    trials: int
    #: The largest absolute difference of the first unequal trial (0.0 when all were equal).
    max_diff: float
    #: Why the candidate did not run (its kernel library missing, or the error it raised).
    error: str = ""

    @property
    def exact(self) -> bool:
        return not self.error and self.equal == self.trials


def _flat(out) -> list[torch.Tensor]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _bits(t: torch.Tensor) -> torch.Tensor:
    """``t`` as torch.equal should see it: one-byte floats (fp8) as their bytes."""
    return t.view(torch.uint8) if t.is_floating_point() and t.element_size() == 1 else t


def compare(eager: Callable, candidate: Callable, make_inputs: Callable[[int], tuple], trials: int) -> Verdict:
    """``candidate`` against ``eager`` on ``trials`` fresh inputs (``make_inputs(trial)``), bit for bit."""
    equal, first_diff = 0, 0.0
    for trial in range(trials):
        args = make_inputs(trial)
        want, got = _flat(eager(*args)), _flat(candidate(*args))
        if len(want) == len(got) and all(
            w.dtype == g.dtype and torch.equal(_bits(w), _bits(g)) for w, g in zip(want, got)
        ):
            equal += 1
        elif not first_diff:
            first_diff = max((w.float() - g.float()).abs().max().item() for w, g in zip(want, got)) or float("nan")
    return Verdict(equal, trials, first_diff)


def gpu_us(run: Callable[[], object], cuda: bool, replays: int = 50) -> float:
    """Median microseconds of GPU time per ``run()``: ten calls captured in a CUDA graph, replayed
    ``replays`` times between events (``cuda`` False: wall time per plain call)."""
    if not cuda:
        run()
        start = time.perf_counter()
        for _ in range(3):
            run()
        return (time.perf_counter() - start) / 3 * 1e6
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(10):
            run()
    times = []
    for _ in range(replays):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end) * 1000 / 10)
    del graph
    return statistics.median(times)


def _inputs_for(pattern: Pattern, shape: Shape, device: str, seed: int) -> Callable[[int], tuple]:
    def make(trial: int) -> tuple:
        gen = torch.Generator(device=device).manual_seed(seed * 1000 + trial)
        return pattern.inputs(shape, gen, device, 10.0 ** (trial % 4 - 1))

    return make


def run_site(pattern: Pattern, site: Site, device: str, trials: int) -> dict:
    """One site's row: eager time, and per candidate its verdict and time."""
    make = _inputs_for(pattern, site.shape, device, seed=zlib.crc32(site.where.encode()) % 997)
    args = make(0)
    row = {
        "model": site.model,
        "pattern": site.pattern,
        "where": site.where,
        "per_forward": site.per_forward,
        "tokens": site.shape.tokens,
        "eager_us": round(gpu_us(lambda: pattern.eager(*args), args[0].is_cuda), 2),
        "candidates": {},
    }
    for name, fn in pattern.candidates.items():
        if fn is None:
            verdict, us = Verdict(0, 0, 0.0, "comfy-kitchen not installed"), None
        else:
            try:
                verdict = compare(pattern.eager, fn, make, trials)
                us = round(gpu_us(lambda run=fn: run(*args), args[0].is_cuda), 2)
            except Exception as error:  # a candidate that cannot run is a row, not a crash
                verdict, us = Verdict(0, trials, 0.0, f"{type(error).__name__}: {str(error)[:160]}"), None
        saving = None if us is None else round((row["eager_us"] - us) * site.per_forward / 1000, 3)
        row["candidates"][name] = {
            **verdict._asdict(),
            "exact": verdict.exact,
            "us": us,
            "saving_ms_per_forward": saving,
        }
    return row


def _smoke_shape(shape: Shape) -> Shape:
    return Shape(min(shape.tokens, 64), 256, 1024 if shape.hidden else 0, 2 if shape.heads else 0)


def build_map(size: int, models: list[str], trials: int, device: str) -> list[dict]:
    table = patterns()
    rows = []
    for site in sites(size):
        if site.model not in models:
            continue
        if device == "cpu":
            site = site._replace(shape=_smoke_shape(site.shape))
        rows.append(run_site(table[site.pattern], site, device, trials))
    return rows


def format_map(rows: list[dict], smoke: bool) -> str:
    """The map as markdown: one line per site and fused form, then per model the exact saving."""
    lines = [SMOKE_LINE, ""] if smoke else []
    lines += [
        "| model | chain | where | per forward | fused form | exact (trials) | eager µs | fused µs | saving ms / forward |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    totals: dict[str, float] = {}
    for row in rows:
        for name, c in row["candidates"].items():
            exact = (
                "n/a: " + c["error"]
                if c["error"]
                else ("yes" if c["exact"] else f"no: {c['equal']}/{c['trials']} equal, max diff {c['max_diff']:.3g}")
            )
            lines.append(
                f"| {row['model']} | {row['pattern']} | {row['where']} ({row['tokens']} tokens) | {row['per_forward']} | {name} | "
                f"{exact} ({c['trials']}) | {row['eager_us']} | {c['us'] if c['us'] is not None else '-'} | "
                f"{c['saving_ms_per_forward'] if c['saving_ms_per_forward'] is not None else '-'} |"
            )
        best = max((c["saving_ms_per_forward"] or 0.0 for c in row["candidates"].values() if c["exact"]), default=0.0)
        totals[row["model"]] = totals.get(row["model"], 0.0) + max(best, 0.0)
    lines.append("")
    lines += [
        f"- {model}: the exact fused forms save {ms:.2f} ms of GPU time per forward" for model, ms in totals.items()
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fusion_map", description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1024, help="image side in pixels (default 1024)")
    parser.add_argument("--models", default="flux,flux fp8,qwen_image,zimage", help="comma list (default all)")
    parser.add_argument("--trials", type=int, default=20, help="random inputs per fused form (default 20)")
    parser.add_argument("--json", default="", help="also write the rows to this file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[BCG] %(message)s")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    rows = build_map(args.size, [m.strip() for m in args.models.split(",")], args.trials, device)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "size": args.size,
                    "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
                    "torch": torch.__version__,
                    "rows": rows,
                },
                f,
                indent=1,
            )
    print(format_map(rows, smoke=device == "cpu"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
