"""Comfy layer: tests that import ComfyUI from ``$COMFYUI_PATH`` (a ComfyUI checkout; when unset,
the top-level conftest sets it to the ComfyUI this pack sits in).

ComfyUI is put on ``sys.path`` and forced to CPU (``comfy.cli_args.args.cpu = True``) before
``comfy.model_management`` is imported, unless ``BCG_COMFY_TEST_CPU=0``. When ComfyUI cannot be
imported every test in this directory is skipped with the reason below.
"""

import asyncio
import importlib.util
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP_REASON = "ComfyUI not importable: set COMFYUI_PATH to a ComfyUI checkout or put the pack in ComfyUI/custom_nodes (docs/testing.md)"


def _import_comfy():
    """None when ComfyUI imports, else why not."""
    path = os.environ.get("COMFYUI_PATH")
    if not path:
        return "COMFYUI_PATH is unset and the pack is not in a ComfyUI/custom_nodes folder"
    path = os.path.abspath(path)
    if not os.path.isdir(os.path.join(path, "comfy")):
        return f"no comfy/ package under COMFYUI_PATH={path}"
    if path not in sys.path:
        sys.path.insert(0, path)
    try:
        import comfy.cli_args

        if os.environ.get("BCG_COMFY_TEST_CPU", "1") != "0":
            comfy.cli_args.args.cpu = True
        import comfy.model_management  # noqa: F401  (reads args.cpu at import)
        import comfy.sample  # noqa: F401
        import comfy.samplers  # noqa: F401
        import comfy.sd  # noqa: F401

        # ComfyUI's nodes.py, now, while COMFYUI_PATH is first on sys.path: this repository's own
        # nodes/ package (on sys.path as the working directory) would otherwise shadow it for a
        # test that imports a comfy_extras module first (they `import nodes`).
        import nodes  # noqa: F401
    except Exception as exc:  # any import failure means the layer cannot run
        return f"{type(exc).__name__}: {exc}"
    return None


COMFY_IMPORT_ERROR = _import_comfy()


def pytest_report_header(config):
    if COMFY_IMPORT_ERROR is None:
        import comfy.model_management

        return f"comfy layer: ComfyUI from {os.environ['COMFYUI_PATH']}, device {comfy.model_management.get_torch_device()}"
    return f"comfy layer: skipped ({COMFY_IMPORT_ERROR})"


def pytest_collection_modifyitems(config, items):
    if COMFY_IMPORT_ERROR is None:
        return
    skip = pytest.mark.skip(reason=f"{SKIP_REASON} [{COMFY_IMPORT_ERROR}]")
    for item in items:
        if str(item.path).startswith(HERE + os.sep):
            item.add_marker(skip)


# ---------------------------------------------------------------- the pack, loaded like ComfyUI does
@pytest.fixture(scope="module")
def pack():
    """The pack loaded the way ComfyUI's loader does (a package from its ``__init__.py``)."""
    from bcg_testing import PACK, ROOT

    try:
        import av  # noqa: F401  (ComfyUI's node API, comfy_api.latest, imports PyAV)
    except ImportError:
        pytest.skip("PyAV (av) not installed: ComfyUI's node API needs it; the api-level tests still run")

    spec = importlib.util.spec_from_file_location(PACK, ROOT / "__init__.py", submodule_search_locations=[str(ROOT)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACK] = module
    spec.loader.exec_module(module)
    extension = asyncio.run(module.comfy_entrypoint())
    nodes = {n.define_schema().node_id: n for n in asyncio.run(extension.get_node_list())}
    assert set(nodes) == {"BCGApply", "BCGWarmupCapture"}
    return module, nodes


@pytest.fixture
def standin_graphs(pack, monkeypatch):
    """On CPU, let the pack capture with the stand-in backend (tests only); CUDA keeps real graphs."""
    from bcg_runtime.comfy import guards
    from bcg_runtime.core import runner
    from bcg_runtime.core.cpu_graph import RecordingBackend

    real = runner.backend_for
    monkeypatch.setattr(guards, "device_refusal", lambda model_patcher: None)
    monkeypatch.setattr(guards, "process_refusal", lambda: None)  # ComfyUI runs with --cpu here
    monkeypatch.setattr(
        runner, "backend_for", lambda device: RecordingBackend() if device.type == "cpu" else real(device)
    )


@pytest.fixture(scope="session", autouse=True)
def _first_cuda_sampling_of_the_process():
    """On CUDA, sample once before any test takes an eager reference.

    Measured on the H200 (ComfyUI 0.33.0, torch 2.11): the first sampling of a fresh process
    differs from every later one of the same inputs (max abs 0.149 on depth-1 FLUX, 64x64, cfg 2),
    with or without the pack; every later sampling, eager or replayed, is bit-equal to the others.
    A reference taken from that first sampling would fail a BCG run for a difference stock
    ComfyUI makes on its own, so the process samples once first. Nothing is asserted here: the
    exactness tests compare two samplings taken after this one.
    """
    if COMFY_IMPORT_ERROR is not None:
        yield
        return
    import comfy.model_management as mm

    if mm.get_torch_device().type != "cuda":
        yield
        return
    from bcg_testing import conds, release_cuda_memory

    from bench import synthetic

    model = synthetic.load_model("flux", depth=1, seed=0)
    positive, negative = conds("flux")
    synthetic.sample(model, "flux", 64, 64, 2, 2.0, positive, negative, seed=3)
    del model
    release_cuda_memory(unload=True)
    yield


@pytest.fixture(autouse=True)
def _first_calls_always_repay(request, monkeypatch):
    """Comfy tests use depth-1 models for a few steps, where whether a first-call capture repays
    its measured cost is a coin toss; they test what capture on first call does, so every
    first-call capture here is taken. The weighing itself is tested in
    tests/runtime/test_first_call_capture.py, through the nodes by tests marked ``capture_costs``,
    and measured by the batch benchmark."""
    if request.node.get_closest_marker("capture_costs"):
        yield
        return
    from bcg_runtime.core.stats import CaptureCosts

    monkeypatch.setattr(CaptureCosts, "repays", lambda self, calls, size: True)
    yield


@pytest.fixture(scope="session", autouse=True)
def _unverified_families_allowed():
    """Families whose GPU exactness test has not passed yet (``ModelAdapter.gpu_verified``) stay
    off for users unless they opt in; the tests opt in, since they are that verification (the
    opt-out itself is tested in test_flux2.py)."""
    from bcg_runtime.comfy.api import UNVERIFIED_OPT_IN

    before = os.environ.get(UNVERIFIED_OPT_IN)
    os.environ[UNVERIFIED_OPT_IN] = "1"
    yield
    if before is None:
        os.environ.pop(UNVERIFIED_OPT_IN, None)
    else:
        os.environ[UNVERIFIED_OPT_IN] = before


@pytest.fixture(scope="module")
def model(request):
    """The depth-1 model of the test module's ``FAMILY`` (real width, random weights; the recipe's
    ``smallest_depth`` where detection needs more blocks), built once per module; skipped where
    this ComfyUI builds that family otherwise. A module may define its own."""
    from bcg_testing import skip_unless_host_builds

    from bench import synthetic

    family = request.module.FAMILY
    skip_unless_host_builds(family)
    return synthetic.load_model(family, depth=synthetic.family_info(family).smallest_depth, seed=0)
