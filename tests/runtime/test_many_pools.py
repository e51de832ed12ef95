"""A long-lived process makes many graph pools (gpu layer).

A server that captures shape after shape, or the node zoo, creates hundreds of memory pools in one
process. Reading a pool's segments must stay safe however many pools came before: torch's
per-pool snapshot releases the pool id's items once too often, which frees the id's int once it is
a heap int (pool number 257 on), and the next read crashes the process (seen on the H200 as a
segfault in ``_read_pool_segments`` during the zoo). The reads run in a child process so that a
crash fails this test instead of the whole session.
"""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run on the H200 with scripts/gpu_suite.sh"
    ),
]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
POOLS = 600  # well past 256, where pool ids stop being cached small ints

CHILD = textwrap.dedent(
    f"""
    import gc, torch
    from bcg_runtime.core.backends import CudaGraphBackend
    backend, device = CudaGraphBackend(), torch.device("cuda", 0)
    for n in range({POOLS}):
        pool = backend.new_pool(device)
        with backend.allocate_in_pool(pool, device):
            inside = torch.empty(1 << 20, device=device)
        outside = torch.empty(16, device=device)
        assert backend.pool_bytes(pool, device) >= inside.numel() * 4, n
        resident = backend.pool_residency(pool, device)
        assert resident(inside) and not resident(outside), n
        del inside, outside, resident, pool
        if n % 50 == 0:
            gc.collect()
    print("pools read:", {POOLS})
    """
)


def test_pool_reads_survive_hundreds_of_pools_in_one_process():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, f"child exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    assert f"pools read: {POOLS}" in done.stdout
