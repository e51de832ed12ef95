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

import contextlib
import os

import pytest
import torch
from bcg_testing import gpu_families, release_cuda_memory, skip_unless_host_builds

from bench import not_exact, sdpa_probe, synthetic

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.comfy,
    pytest.mark.skipif(
        not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"
    ),
]

FAMILIES = gpu_families()
#: How many more eager samples the repeat test compares with the first (``BCG_EAGER_REPEATS=20``
#: to catch a kernel that parts only now and then: the first repeat that parts is the one named).
EAGER_REPEATS = int(os.environ.get("BCG_EAGER_REPEATS", "1"))
if EAGER_REPEATS < 1:
    raise ValueError(f"BCG_EAGER_REPEATS={EAGER_REPEATS}: give 1 or more (the eager samples compared with the first)")


@pytest.fixture(scope="module", params=FAMILIES)
def loaded(request):
    skip_unless_host_builds(request.param)
    info = synthetic.family_info(request.param)
    model = synthetic.load_model(request.param, depth=info.gpu_test_depth, seed=0, device="cuda")
    yield request.param, model
    del model
    release_cuda_memory(unload=True)


@pytest.mark.parametrize("sdpa_order", ["as found", "cudnn first"])
def test_eager_forward_does_not_read_memory_it_never_wrote(loaded, sdpa_order):
    """Under both SDPA orders a process can hold: cuDNN's attention serves the attentions ComfyUI
    leaves to torch's order (under its 128k-element bound) only when cuDNN is first."""
    family, model = loaded
    dm, args, kwargs = not_exact.record_first_call(model, family, 512, 512, None, batch=2)
    order = sdpa_probe.cudnn_first_in_torch() if sdpa_order == "cudnn first" else contextlib.nullcontext()
    with torch.no_grad(), order:
        found = not_exact.eager_reads_unwritten(
            lambda: not_exact.plain_forward(dm)(*args, **kwargs), model.load_device, root=dm
        )
    print(f"{family} (SDPA order {sdpa_order}): {found}")
    assert found["filled_bytes"] > 1 << 30, found  # the check filled memory the forward could be handed
    assert found["repeat_max_abs"] == 0.0, f"{family}: eager differs between two runs after the same fill: {found}"
    assert found["max_abs"] == 0.0 and found["nan_outputs"] == 0, (
        f"{family}: the eager forward reads memory it never wrote under SDPA order {sdpa_order} (its output follows"
        f" what the allocator held): {found}"
    )


@pytest.mark.parametrize("sdpa_order", ["as found", "cudnn first"])
def test_eager_sampling_repeats_itself_call_by_call(loaded, sdpa_order):
    """Every DiT call of a 3-step 512² cfg 2.5 run, sampled 1 + ``EAGER_REPEATS`` times: the same
    inputs and outputs, or the first call where a repeat parts from the first run (inputs:
    something outside the DiT; outputs on equal inputs: the DiT's own kernels), with the first
    module that parted, what that call gives when run again on its recorded inputs, and the
    process's torch settings."""
    family, model = loaded
    order = sdpa_probe.cudnn_first_in_torch() if sdpa_order == "cudnn first" else contextlib.nullcontext()
    with torch.no_grad(), order:
        runs = [not_exact.record_calls(model, family, 512, 512, None, steps=3, modules=True)]
        for repeat in range(1, EAGER_REPEATS + 1):  # each against the first, up to the first that parts
            runs[1:] = [not_exact.record_calls(model, family, 512, 512, None, steps=3, modules=True)]
            found = not_exact.compare_runs(*runs)
            found["repeat"] = f"{repeat} of {EAGER_REPEATS}"
            if found["first_input_differing"] is not None or found["first_output_differing"] is not None:
                break
        if found["first_output_differing"] is not None:
            index = found["first_output_differing"][0]
            found["rerun_vs_first_run"] = not_exact.rerun_call(model, runs[0][index])
            found["rerun_vs_second_run"] = not_exact.rerun_call(model, runs[1][index])
        found["torch_state"] = not_exact.torch_state()
    print(f"{family}: {found}")
    assert found["calls"][0] == found["calls"][1] > 0, found
    assert found["first_input_differing"] is None and found["first_output_differing"] is None, (
        f"{family}: eager sampling does not repeat itself (SDPA order {sdpa_order}): {found}"
    )
