"""gpu layer: each family's eager DiT forward reads only memory it wrote.

A graph is proven by one replay against one eager run. That proof means something only if eager
gives the same output for the same inputs whatever bytes the allocator hands the forward: a
forward that reads memory it never wrote (an ``empty`` buffer filled in part) is deterministic
in a fresh process, where new memory reads as zeros, and not after other work has left its bytes
in the allocator's cache. So for the first DiT call of a KSampler run (cond and uncond batched),
at the full-size test's depth: the forward after the allocator's free memory was filled with 0x00
and after 0xFF (NaN in every float dtype) must give the same output, bit for bit. And a whole
eager sample, run twice, must repeat itself call by call: where it does not, the test names the
first call whose inputs or output parted (run it after ``tests/runtime`` in one process to see
what other GPU work leaves behind).
"""

import os

import pytest
import torch
from bcg_testing import release_cuda_memory, skip_unless_host_builds

from bench import not_exact, synthetic

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.comfy,
    pytest.mark.skipif(
        not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"
    ),
]

FAMILIES = os.environ.get("BCG_GPU_FAMILIES", "").split() or list(synthetic.FAMILIES)


@pytest.fixture(scope="module", params=FAMILIES)
def loaded(request):
    skip_unless_host_builds(request.param)
    info = synthetic.family_info(request.param)
    model = synthetic.load_model(request.param, depth=info.gpu_test_depth, seed=0, device="cuda")
    yield request.param, model
    del model
    release_cuda_memory(unload=True)


def test_eager_forward_does_not_read_memory_it_never_wrote(loaded):
    family, model = loaded
    dm, args, kwargs = not_exact.record_first_call(model, family, 512, 512, None, batch=2)
    with torch.no_grad():
        found = not_exact.eager_reads_unwritten(lambda: dm._forward(*args, **kwargs), model.load_device, root=dm)
    print(f"{family}: {found}")
    assert found["filled_bytes"] > 1 << 30, found  # the check filled memory the forward could be handed
    assert found["repeat_max_abs"] == 0.0, f"{family}: eager differs between two runs after the same fill: {found}"
    assert found["max_abs"] == 0.0 and found["nan_outputs"] == 0, (
        f"{family}: the eager forward reads memory it never wrote (its output follows what the allocator held): {found}"
    )


def test_eager_sampling_repeats_itself_call_by_call(loaded):
    """Every DiT call of a 3-step 512² cfg 2.5 run, sampled twice: the same inputs and outputs, or
    the first call where they part (inputs: something outside the DiT; outputs on equal inputs:
    the DiT's own kernels)."""
    family, model = loaded
    with torch.no_grad():
        runs = [not_exact.record_calls(model, family, 512, 512, None, steps=3) for _ in range(2)]
    found = not_exact.compare_runs(*runs)
    assert found["calls"][0] == found["calls"][1] > 0, found
    assert found["first_input_differing"] is None and found["first_output_differing"] is None, (
        f"{family}: eager sampling does not repeat itself: {found}"
    )
