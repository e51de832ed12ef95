"""gpu layer: each family's eager DiT forward reads only memory it wrote.

A graph is proven by one replay against one eager run. That proof means something only if eager
gives the same output for the same inputs whatever bytes the allocator hands the forward: a
forward that reads memory it never wrote (an ``empty`` buffer filled in part) is deterministic
in a fresh process, where new memory reads as zeros, and not after other work has left its bytes
in the allocator's cache. So for the first DiT call of a KSampler run (cond and uncond batched),
at the full-size test's depth: the forward after the allocator's free memory was filled with 0x00
and after 0xFF (NaN in every float dtype) must give the same output, bit for bit.
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


@pytest.mark.parametrize("family", FAMILIES)
def test_eager_forward_does_not_read_memory_it_never_wrote(family):
    skip_unless_host_builds(family)
    info = synthetic.family_info(family)
    model = synthetic.load_model(family, depth=info.gpu_test_depth, seed=0, device="cuda")
    try:
        dm, args, kwargs = not_exact.record_first_call(model, family, 512, 512, None, batch=2)
        with torch.no_grad():
            found = not_exact.eager_reads_unwritten(lambda: dm._forward(*args, **kwargs), model.load_device, root=dm)
        print(f"{family}: {found}")
        assert found["filled_bytes"] > 1 << 30, found  # the check filled memory the forward could be handed
        assert found["repeat_max_abs"] == 0.0, f"{family}: eager differs between two runs after the same fill: {found}"
        assert found["max_abs"] == 0.0 and found["nan_outputs"] == 0, (
            f"{family}: the eager forward reads memory it never wrote (its output follows what the allocator "
            f"held): {found}"
        )
    finally:
        del model
        release_cuda_memory(unload=True)
