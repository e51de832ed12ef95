"""Memory held across eager breaks, on real CUDA graphs (gpu layer).

A breakable capture keeps non-owning views of the pool memory that crosses each break, so the
model code's own references decide when a block is reused, as in eager. These tests show the
saving against holding every break's tensors, and that the views never read or write memory that
was reused behind their back (churn, interleaved signatures, break inputs made outside the pool).
"""

import gc

import pytest
import torch

from bcg_runtime.core import CaptureOptions, CaptureStatus, GraphRunner, RunnerLimits, graph_break
from bcg_runtime.core.backends import CudaGraphBackend

from test_runner import inputs, model_on

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run on the H200 with scripts/gpu_suite.sh"
    ),
]

CUDA = torch.device("cuda")
BLOCKS, TOKENS, DIM = 12, 4096, 512  # one fp32 activation: 8 MiB, well above allocator rounding


class OwningBackend(CudaGraphBackend):
    """The real backend with borrowing switched off: every tensor crossing a break is owned."""

    def pool_residency(self, pool, device):
        return lambda tensor: False


def captured_memory(backend, break_attention: bool) -> int:
    model = model_on(CUDA, n_blocks=BLOCKS, dim=DIM, break_attention=break_attention)
    runner = GraphRunner(backend=backend, limits=RunnerLimits(), name="memory")
    with torch.inference_mode():
        args = inputs(CUDA, n_img=TOKENS, dim=DIM)
        assert runner.capture(model, args).status is CaptureStatus.CAPTURED
        assert torch.equal(runner(model, args), model(*args))
    held = runner.memory_bytes
    runner.reset()
    del runner, model
    gc.collect()
    torch.cuda.empty_cache()
    return held


def test_breakable_capture_holds_about_what_one_graph_holds():
    block_bytes = 4 * TOKENS * DIM * 4  # what one break holds when it owns: q, k, v and the attention output
    one_graph = captured_memory(CudaGraphBackend(), break_attention=False)
    borrowed = captured_memory(CudaGraphBackend(), break_attention=True)
    owned = captured_memory(OwningBackend(), break_attention=True)
    print(
        f"one graph {one_graph / 2**20:.1f} MiB, breakable borrowed {borrowed / 2**20:.1f} MiB, owned {owned / 2**20:.1f} MiB"
    )
    assert owned >= one_graph + (BLOCKS - 2) * block_bytes, "owning every break should cost about a block per break"
    assert borrowed <= one_graph + 3 * block_bytes, "borrowed breaks should cost a few blocks at most over one graph"


def test_borrowed_breaks_stay_exact_under_churn_and_interleaved_shapes():
    model = model_on(CUDA, n_blocks=6, dim=DIM)
    runner = GraphRunner(backend=CudaGraphBackend(), limits=RunnerLimits(), name="churn")
    with torch.inference_mode():
        for tokens in (TOKENS, TOKENS // 2):
            assert runner.capture(model, inputs(CUDA, n_img=tokens, dim=DIM)).status is CaptureStatus.CAPTURED
            junk = [torch.randn(tokens, DIM, device=CUDA) for _ in range(6)]
            del junk
        gc.collect()
        torch.cuda.empty_cache()
        churn = [torch.full((TOKENS, DIM), float(i), device=CUDA) for i in range(12)]
        for seed in range(1, 5):
            for tokens in (TOKENS // 2, TOKENS):
                args = inputs(CUDA, n_img=tokens, dim=DIM, seed=seed)
                assert torch.equal(runner(model, args), model(*args)), f"{tokens} tokens, seed {seed}"
            churn.append(torch.full((TOKENS, DIM), float(len(churn)), device=CUDA))
        assert all(bool((c == i).all()) for i, c in enumerate(churn)), "replay wrote into memory it does not own"
    assert runner.stats.hits == 8 and not runner.stats.eager


def test_break_input_made_outside_the_pool_is_owned_by_the_graph():
    """A tensor made before the capture and passed through to a break must outlive its caller.
    The caller keys that argument by value (``opaque_keyed``, ``key_extra``), the one way a replay
    may read a captured call's opaque tensor (an unkeyed one fails the capture: test_outside_reads)."""

    def scale(h, side):
        return h * side

    def fn(x, side=None):
        return graph_break(scale, x + 1, side) - 1

    runner = GraphRunner(
        backend=CudaGraphBackend(),
        limits=RunnerLimits(),
        name="outside",
        options=CaptureOptions(opaque_keyed=frozenset({"side"})),
    )
    x = torch.randn(256, 256, device=CUDA)
    keyed = {"key_extra": ("side", 3.0), "opaque": ("side",)}
    with torch.inference_mode():
        side = torch.full((256, 256), 3.0, device=CUDA)
        assert runner.capture(fn, (x,), {"side": side}, **keyed).status is CaptureStatus.CAPTURED
        expected = fn(x, side)
        del side
        gc.collect()
        torch.cuda.empty_cache()
        churn = [torch.full((256, 256), -7.0, device=CUDA) for _ in range(32)]
        replayed = runner(fn, (x,), {"side": None}, **keyed)
        assert runner.stats.hits == 1, runner.stats
        assert torch.equal(replayed, expected)
        assert all(bool((c == -7.0).all()) for c in churn)
