"""Does CUDA graph work make cuDNN's attention non-deterministic? ``python -m bench.sdpa_probe``.

LTX-2's eager sampling stops repeating itself with cuDNN's attention first once the process has
captured CUDA graphs around ``F.scaled_dot_product_attention`` (docs/benchmarks.md, LTX-2's
exactness): the audio stream's cross-attention, a few queries over 1024 text keys, gives another
output on the same inputs. This probe asks the question in plain torch, without ComfyUI or BCG,
one fresh process per variant (whatever a variant changes in the process stays changed):

- ``none``: nothing before; the baseline, which must repeat itself;
- ``eager_sdpa``: one eager SDPA of the small capture shape (flash first), no graph;
- ``graph_matmul``: a ``torch.cuda.graph`` capture and replay of a matmul (graph work without SDPA);
- ``graph_sdpa``: the same around a bf16 SDPA in torch's default order (flash first);
- ``graph_sdpa_fp32``: the same in fp32 (memory-efficient attention), the break-memory tests' dtype;
- ``graph_sdpa_cudnn``: the same with cuDNN's attention first inside the capture.

Then, with cuDNN's attention first (``sdpa_kernel(..., set_priority=True)``, the order a stock
ComfyUI server ends up with), the probe shape (``--q`` / ``--kv``, LTX-2's audio cross-attention at
512x512x1 and batch 2 by default) is run ``--repeats`` times on the same inputs (LTX-2's case
parted once in a few hundred attention calls, so a few calls prove little). A variant *repeats*
when every output equals the first bit for bit, asked three ways: the same tensors again, equal
copies at new addresses (as each sampling step's tensors are), and equal copies whose neighbouring
memory holds other values (a kernel reading past its tensor would show there; filling *free*
memory, as the eager-reads test does, cannot show a read of a live neighbour). The inputs are laid
out as ComfyUI's attention passes them (a (b, s, h, d) projection seen through
``transpose(1, 2)``). Prints one line per variant and writes them to ``--json``. Needs CUDA.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

VARIANTS = ("none", "eager_sdpa", "graph_matmul", "graph_sdpa", "graph_sdpa_fp32", "graph_sdpa_cudnn")


def _shape(text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(part) for part in text.split(","))
    except ValueError:
        shape = ()
    if len(shape) != 4 or min(shape) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give batch,heads,tokens,head_dim, e.g. 2,32,1,64")
    return shape


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of calls, at least 1")
    return value


def cudnn_first_in_torch():
    """torch's SDPA order with cuDNN's attention first, for the duration (``set_priority``): the
    order a process on a Hopper GPU can hold (docs/how-it-works.md, the fingerprint). Unlike the
    pack's ``sdpa_order.cudnn_first`` it leaves ComfyUI's own list, which governs its large
    attentions, as it is."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    order = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
    return sdpa_kernel(order, set_priority=True)


def _before(variant: str) -> None:
    """The work ``variant`` does before the probe (module docstring)."""
    import contextlib

    import torch
    import torch.nn.functional as F

    if variant == "none":
        return
    dtype = torch.float32 if variant == "graph_sdpa_fp32" else torch.bfloat16
    q = torch.randn(1, 8, 256, 64, device="cuda", dtype=dtype)
    if variant == "eager_sdpa":
        F.scaled_dot_product_attention(q, q, q)
        torch.cuda.synchronize()
        return
    work = (
        (lambda: q.flatten(0, 2) @ q.flatten(0, 2).T)
        if variant == "graph_matmul"
        else (lambda: F.scaled_dot_product_attention(q, q, q))
    )
    order = cudnn_first_in_torch() if variant == "graph_sdpa_cudnn" else contextlib.nullcontext()
    with order:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            work()  # warm-up outside the capture, as torch.cuda.graphs' docs ask
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            work()
        graph.replay()
    torch.cuda.synchronize()
    del graph


def _as_comfy_lays_out(values, filler=None):
    """``values`` (b, h, s, d) laid out as ComfyUI's attention passes it: a (b, s, h, d) projection
    output seen through ``transpose(1, 2)``. With ``filler``, that storage is the front of a buffer
    twice its size whose back half holds ``filler``'s values, so what lies beside the tensor in
    memory differs while its own values do not."""
    import torch

    b, h, s, d = values.shape
    size = b * s * h * d
    storage = torch.empty(2 * size if filler is not None else size, device=values.device, dtype=values.dtype)
    if filler is not None:
        storage[size:].copy_(filler(size))
    bshd = storage[:size].view(b, s, h, d)
    bshd.copy_(values.transpose(1, 2))
    return bshd.transpose(1, 2)


def probe(variant: str, q_shape, kv_shape, repeats: int, seed: int) -> dict:
    """Runs in this process: ``variant``'s work, then the cuDNN-first repeats, three ways: the same
    tensors again, equal copies at new addresses, equal copies beside different neighbours."""
    import torch
    import torch.nn.functional as F

    _before(variant)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q, k, v = (
        _as_comfy_lays_out(torch.randn(shape, generator=gen, device="cuda", dtype=torch.bfloat16))
        for shape in (q_shape, kv_shape, kv_shape)
    )
    ways = {"same_tensors": [], "new_addresses": [], "beside_other_values": []}  # (parted?, max abs) per call
    with cudnn_first_in_torch():
        first = F.scaled_dot_product_attention(q, k, v)

        def versus_first(way, out):  # kept on the device as two numbers: no sync, no held outputs
            ways[way].append(torch.stack(((out != first).any().float(), (out.float() - first.float()).abs().max())))

        for i in range(repeats):
            versus_first("same_tensors", F.scaled_dot_product_attention(q, k, v))
            spacer = torch.empty(4096 * (i % 64 + 1), device="cuda", dtype=torch.bfloat16)
            versus_first("new_addresses", F.scaled_dot_product_attention(*(_as_comfy_lays_out(t) for t in (q, k, v))))
            del spacer

            def filler(n, i=i):
                return torch.full((n,), float(i % 7 + 1), device="cuda", dtype=torch.bfloat16) * (-1) ** i

            beside = (_as_comfy_lays_out(t, filler) for t in (q, k, v))
            versus_first("beside_other_values", F.scaled_dot_product_attention(*beside))
    torch.cuda.synchronize()
    found = {"variant": variant}
    for way, calls in ways.items():
        parted, max_abs = torch.stack(calls).cpu().unbind(1)
        found[way] = {
            "repeats": not parted.any().item(),
            "calls_parted": int(parted.sum().item()),
            "max_abs_vs_first": max_abs.max().item(),
        }
    found.update(
        cudnn=torch.backends.cudnn.version(),
        torch=torch.__version__,
        order_after=str(torch._C._get_sdp_priority_order()),
    )
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sdpa_probe", description=__doc__.split("\n\n")[0])
    parser.add_argument("--q", type=_shape, default=(2, 32, 1, 64), help="query shape b,h,s,d (default 2,32,1,64)")
    parser.add_argument("--kv", type=_shape, default=(2, 32, 1024, 64), help="key/value shape (default 2,32,1024,64)")
    parser.add_argument(
        "--repeats",
        type=_positive,
        default=1000,
        help="probe calls per way and variant (default 1000: LTX-2's case parted once in a few hundred attention calls)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma list of {', '.join(VARIANTS)}")
    parser.add_argument("--json", help="write the findings here")
    parser.add_argument("--one", choices=VARIANTS, help=argparse.SUPPRESS)  # internal: one variant, this process
    args = parser.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        parser.error(f"--variants: {', '.join(unknown)} not one of {', '.join(VARIANTS)}")
    import torch

    if not torch.cuda.is_available():
        print("sdpa_probe: needs a CUDA GPU (cuDNN's attention); nothing to probe here", file=sys.stderr)
        return 2
    shapes = [",".join(map(str, args.q)), ",".join(map(str, args.kv))]
    if args.one:
        print(json.dumps(probe(args.one, args.q, args.kv, args.repeats, args.seed)))
        return 0
    found = []
    for variant in variants:  # a fresh process each: what a variant changes stays changed
        cmd = [sys.executable, "-m", "bench.sdpa_probe", "--one", variant, "--q", shapes[0], "--kv", shapes[1]]
        cmd += ["--repeats", str(args.repeats), "--seed", str(args.seed)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        lines = done.stdout.strip().splitlines()
        result = (
            json.loads(lines[-1])
            if done.returncode == 0 and lines
            else {"variant": variant, "error": done.stderr[-600:]}
        )
        found.append(result)
        print(f"sdpa_probe: {json.dumps(result)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"q": args.q, "kv": args.kv, "repeats": args.repeats, "variants": found}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
