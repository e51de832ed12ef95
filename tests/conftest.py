"""Shared test fixtures. Layers are pytest markers (see pyproject.toml): unit (CPU, always),
gpu (CUDA), comfy (ComfyUI importable), e2e (a real ComfyUI server).

ComfyUI is ``$COMFYUI_PATH`` or, when that is unset, the ComfyUI this pack sits in
(``ComfyUI/custom_nodes/<pack>``, see ``comfyui_path.py``); the path found is exported as
``COMFYUI_PATH`` before any layer's conftest reads it, so every layer and subprocess sees one
ComfyUI."""

import logging
import os
import sys

import pytest
import torch

from comfyui_path import find_comfyui

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

COMFYUI_FOUND = None if os.environ.get("COMFYUI_PATH") else find_comfyui()
if COMFYUI_FOUND:
    os.environ["COMFYUI_PATH"] = COMFYUI_FOUND

HAS_CUDA = torch.cuda.is_available()
NO_CUDA_REASON = "needs a CUDA GPU (gpu layer): run on the H200 with scripts/gpu_suite.sh"


def settle_sdpa_priority_order() -> None:
    """torch (2.11, measured on the H200) puts cuDNN's attention first in SDPA's priority order at
    the first SDPA call of a process on a Hopper GPU, once; ComfyUI's ``sdpa_kernel(...,
    set_priority=True)`` restores the order it saw, so a process keeps flash first when its first
    SDPA call was one of ComfyUI's large attentions and cuDNN first when it was a plain one. Tests
    must not depend on which test ran SDPA first: one tiny call here, the order restored after,
    leaves every test the order a fresh process reports (docs/how-it-works.md, the fingerprint)."""
    if not HAS_CUDA:
        return
    before = list(torch._C._get_sdp_priority_order())
    q = torch.zeros(1, 1, 8, 8, device="cuda", dtype=torch.bfloat16)
    torch.nn.functional.scaled_dot_product_attention(q, q, q)
    torch._C._set_sdp_priority_order(before)
    del q
    torch.cuda.empty_cache()


@pytest.fixture(scope="session", autouse=True)
def _sdpa_priority_order_settled():
    settle_sdpa_priority_order()


def backend_params():
    """Run a runtime test on the CPU stand-in (unit layer) and on real CUDA graphs (gpu layer)."""
    return [
        pytest.param("cpu", marks=pytest.mark.unit, id="cpu-standin"),
        pytest.param(
            "cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(not HAS_CUDA, reason=NO_CUDA_REASON)], id="cuda"
        ),
    ]


@pytest.fixture(params=backend_params())
def device(request):
    return torch.device(request.param)


@pytest.fixture
def make_runner(device):
    """A GraphRunner for ``device``: the CPU stand-in backend on CPU, the real one on CUDA."""
    from bcg_runtime.core import GraphRunner, RunnerLimits
    from bcg_runtime.core.cpu_graph import RecordingBackend

    def make(**limits):
        backend = RecordingBackend() if device.type == "cpu" else None
        return GraphRunner(backend=backend, limits=RunnerLimits(**limits), name="test")

    return make


def pytest_addoption(parser):
    parser.addoption(
        "--all-layers",
        action="store_true",
        default=os.environ.get("BCG_ALL_LAYERS") == "1",
        help="run every comfy and e2e test, not only the smoke set (also BCG_ALL_LAYERS=1, or name test paths)",
    )


#: Each comfy test builds and samples real-width models (20-50 s apiece on 2 cores): the README's
#: ``python -m pytest`` runs the unit layer and the comfy tests marked ``smoke`` (a few families
#: end to end through ComfyUI's loader and KSampler, the nodes, the exactness guards, the real
#: packs), so it finishes in minutes; ``--all-layers`` or explicit paths run the whole layer.
SMOKE = "smoke"


def pytest_collection_modifyitems(config, items):
    explicit = config.args_source is pytest.Config.ArgsSource.ARGS  # paths named on the command line
    if config.getoption("--all-layers") or explicit:
        return
    keep, drop = [], []
    for item in items:
        heavy = item.get_closest_marker("comfy") or item.get_closest_marker("e2e")
        (drop if heavy and not item.get_closest_marker(SMOKE) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_report_header(config):
    if COMFYUI_FOUND:
        return f"ComfyUI: {COMFYUI_FOUND} (the ComfyUI this pack sits in; COMFYUI_PATH overrides)"
    return None


@pytest.fixture(autouse=True)
def _bcg_logs(caplog):
    caplog.set_level(logging.INFO, logger="bcg_runtime")
    yield


def process_settings() -> dict:
    """The process-wide settings a test could leave changed that make a later forward take other
    kernels: torch's SDPA backend switches and priority order, cuDNN and matmul flags, determinism,
    and (once imported) ComfyUI's own SDPA order and training flag. A fresh process's eager is the
    reference every exactness test compares with, so no test may leave these other than it found
    them."""
    b = torch.backends
    found = {
        "torch sdpa priority order": tuple(torch._C._get_sdp_priority_order()),
        "torch sdpa backends enabled": (
            b.cuda.flash_sdp_enabled(),
            b.cuda.mem_efficient_sdp_enabled(),
            b.cuda.math_sdp_enabled(),
            b.cuda.cudnn_sdp_enabled(),
        ),
        "cudnn flags": (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32),
        "matmul flags": (
            b.cuda.matmul.allow_tf32,
            b.cuda.matmul.allow_bf16_reduced_precision_reduction,
            b.cuda.matmul.allow_fp16_reduced_precision_reduction,
            torch.get_float32_matmul_precision(),
        ),
        "deterministic algorithms": torch.are_deterministic_algorithms_enabled(),
        "default dtype": torch.get_default_dtype(),
    }
    ops, mm = sys.modules.get("comfy.ops"), sys.modules.get("comfy.model_management")
    if ops is not None and hasattr(ops, "SDPA_BACKEND_PRIORITY"):
        found["comfy.ops.SDPA_BACKEND_PRIORITY"] = tuple(ops.SDPA_BACKEND_PRIORITY)
    if mm is not None and hasattr(mm, "in_training"):
        found["comfy.model_management.in_training"] = mm.in_training
    return found


@pytest.fixture(autouse=True)
def _process_settings_left_as_found():
    """Fails the test that leaves a :func:`process_settings` value changed, naming it, and puts
    torch's SDPA order back so that the tests after it still run against a fresh process's eager."""
    before = process_settings()
    yield
    after = process_settings()
    changed = {name: (before.get(name), value) for name, value in after.items() if before.get(name, value) != value}
    if "torch sdpa priority order" in changed:
        torch._C._set_sdp_priority_order(list(before["torch sdpa priority order"]))
    if changed:
        pytest.fail(f"the test left process settings changed (before, after): {changed}")
