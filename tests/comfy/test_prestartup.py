"""ComfyUI's own startup runs the pack's ``prestartup_script.py`` between setting
``backend:cudaMallocAsync`` and importing torch.

Each test starts ``$COMFYUI_PATH/main.py --cpu --quick-test-for-ci`` (it exits once startup is
done) with this checkout linked into a temporary ``custom_nodes``, under the interpreter running
the tests. A small wrapper runs main.py as ``__main__`` and records the allocator variables and
ComfyUI's ``args.cuda_malloc`` at the moment torch is first imported, and afterwards the
allocator torch chose (a CUDA build of torch picks it when it loads, GPU or not).

Under ``--cpu`` the switch happens but says nothing (BCG cannot run there, and the pack's one
start-up line says that instead); the switch line itself is checked on a GPU server without
flags (tests/e2e/test_default_allocator.py) and in tests/unit/test_allocator_env.py.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from bcg_runtime.allocator_env import ALLOC_CONF_VARS, OPT_OUT_VAR

pytestmark = pytest.mark.comfy
ROOT = Path(__file__).resolve().parents[2]
CUDA_VAR = ALLOC_CONF_VARS[0]
SWITCH_LINE = "[BCG] This ComfyUI process now uses PyTorch's native CUDA allocator instead of cudaMallocAsync"
#: The pack's one start-up line under --cpu (startup.py).
CPU_LINE = "[BCG] BCG cannot run in this ComfyUI process: no CUDA: ComfyUI runs with --cpu; graphs need an NVIDIA GPU, models run unchanged"
#: ComfyUI turns cudaMallocAsync on by default only for a CUDA build of torch; elsewhere ask for it.
ASK_FOR_IT = [] if torch.version.cuda else ["--cuda-malloc"]

WRAPPER = textwrap.dedent(
    """
    import builtins, json, os, runpy, sys
    comfy, out = sys.argv[1], sys.argv[2]
    sys.argv = [os.path.join(comfy, "main.py")] + sys.argv[3:]
    sys.path.insert(0, comfy)
    os.chdir(comfy)
    state = {"at_torch_import": None}
    real_import = builtins.__import__

    def hook(name, globals=None, locals=None, fromlist=(), level=0):
        if state["at_torch_import"] is None and level == 0 and name.split(".")[0] == "torch" and "torch" not in sys.modules:
            args = getattr(sys.modules.get("comfy.cli_args"), "args", None)
            state["at_torch_import"] = {
                "env": {k: os.environ[k] for k in __VARS__ if k in os.environ},
                "cuda_malloc": getattr(args, "cuda_malloc", None),
            }
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = hook
    exit_code, error = None, None
    try:
        runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as exc:
        exit_code = exc.code
    except BaseException as exc:
        error = f"{type(exc).__name__}: {exc}"
    builtins.__import__ = real_import
    backend = None
    if "torch" in sys.modules:
        try:
            backend = sys.modules["torch"].cuda.get_allocator_backend()
        except (AttributeError, RuntimeError):
            pass
    with open(out, "w") as f:
        json.dump(dict(state, exit_code=exit_code, error=error, backend=backend), f)
    """
).replace("__VARS__", repr(ALLOC_CONF_VARS))


def _start_comfyui(tmp_path, env=None, args=()):
    comfy = os.path.abspath(os.environ["COMFYUI_PATH"])
    if not os.path.isfile(os.path.join(comfy, "main.py")):
        pytest.skip(f"no main.py under COMFYUI_PATH={comfy}")
    base = tmp_path / "base"
    pack = base / "custom_nodes" / "ComfyUI-BCG"
    pack.parent.mkdir(parents=True)
    try:
        pack.symlink_to(ROOT, target_is_directory=True)
    except OSError:  # no symlinks here: copy what ComfyUI loads
        shutil.copytree(ROOT, pack, ignore=shutil.ignore_patterns(".*", "__pycache__", "tests", "bench_out"))
    out = tmp_path / "probe.json"
    clean = {k: v for k, v in os.environ.items() if k not in ALLOC_CONF_VARS and k != OPT_OUT_VAR}
    command = [sys.executable, "-c", WRAPPER, comfy, str(out), "--cpu", "--quick-test-for-ci", "--disable-api-nodes"]
    command += ["--base-directory", str(base), *ASK_FOR_IT, *args]
    proc = subprocess.run(
        command,
        env=dict(clean, **(env or {})),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
    )
    assert out.is_file(), f"the wrapper wrote nothing (rc {proc.returncode}):\n{proc.stdout[-4000:]}"
    result = json.loads(out.read_text())
    assert result["at_torch_import"] is not None, f"ComfyUI never imported torch:\n{proc.stdout[-4000:]}"
    return (
        result,
        [line for line in proc.stdout.splitlines() if "[BCG]" in line and "status route" not in line],
        proc.stdout,
    )


def _finished(result, log):
    """ComfyUI's startup completed; a missing server requirement skips after the checks above."""
    if result["error"] and result["error"].startswith("ModuleNotFoundError"):
        pytest.skip(
            f"the prestartup checks passed, but ComfyUI could not finish starting ({result['error']}): install its requirements.txt"
        )
    assert result["error"] is None and result["exit_code"] in (0, None), f"{result['error']}\n{log[-4000:]}"


def _host_strips_expandable_segments() -> bool:
    """ComfyUI 0.34+'s ``cuda_malloc.py`` (``@7fd2ff0``) removes ``expandable_segments:True`` from
    ``PYTORCH_CUDA_ALLOC_CONF`` itself, before any prestartup script runs (0.8.0 and 0.33.0 keep it)."""
    source = Path(os.environ["COMFYUI_PATH"], "cuda_malloc.py")
    return source.is_file() and "expandable_segments" in source.read_text()


@pytest.mark.parametrize(
    "user_value,expected",
    [
        (None, {}),
        ("garbage_collection_threshold:0.8", {CUDA_VAR: "garbage_collection_threshold:0.8"}),
        ("expandable_segments:True", "host"),
    ],
    ids=["default", "user-options-kept", "expandable-segments-as-comfyui-leaves-it"],
)
def test_comfyui_runs_the_prestartup_script_before_torch(tmp_path, user_value, expected):
    if expected == "host":  # what the host's own cuda_malloc.py leaves; BCG removes only its backend entry
        expected = {} if _host_strips_expandable_segments() else {CUDA_VAR: user_value}
    env = {CUDA_VAR: user_value} if user_value else {}
    result, lines, log = _start_comfyui(tmp_path, env)
    # the allocator was switched (below) without a line: only the start-up line says BCG is off
    assert len(lines) == 1 and lines[0].endswith(CPU_LINE), log[-4000:]
    assert result["at_torch_import"] == {"env": expected, "cuda_malloc": False}
    if torch.version.cuda:
        assert result["backend"] == "native"
    _finished(result, log)


def test_opt_out_keeps_comfyuis_cuda_malloc_async(tmp_path):
    result, lines, log = _start_comfyui(tmp_path, {OPT_OUT_VAR: "1"})
    assert len(lines) == 1 and lines[0].endswith(CPU_LINE), log[-4000:]  # the opt-out line is debug under --cpu
    assert result["at_torch_import"] == {"env": {CUDA_VAR: "backend:cudaMallocAsync"}, "cuda_malloc": True}
    if torch.version.cuda:
        assert result["backend"] == "cudaMallocAsync"
    _finished(result, log)


def test_disable_all_custom_nodes_skips_prestartup_and_keeps_cuda_malloc_async(tmp_path):
    """The documented limit: a launch that runs no prestartup script keeps cudaMallocAsync, and
    BCG's runtime refusal (guards.allocator_refusal) then keeps it off."""
    result, lines, log = _start_comfyui(tmp_path, args=["--disable-all-custom-nodes"])
    assert lines == [], log[-4000:]
    assert result["at_torch_import"] == {"env": {CUDA_VAR: "backend:cudaMallocAsync"}, "cuda_malloc": True}
    if torch.version.cuda:
        assert result["backend"] == "cudaMallocAsync"
    _finished(result, log)
