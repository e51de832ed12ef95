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


def pytest_report_header(config):
    if COMFYUI_FOUND:
        return f"ComfyUI: {COMFYUI_FOUND} (the ComfyUI this pack sits in; COMFYUI_PATH overrides)"
    return None


@pytest.fixture(autouse=True)
def _bcg_logs(caplog):
    caplog.set_level(logging.INFO, logger="bcg_runtime")
    yield
