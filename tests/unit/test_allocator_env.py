"""The prestartup allocator switch: ``bcg_runtime/allocator_env.py`` and ``prestartup_script.py``.

The pure functions run on plain dicts; the script runs in subprocesses loaded the way ComfyUI
loads it (``spec_from_file_location`` under its path, outside the package), followed by
``import torch``. Where torch is a CUDA build (it picks its allocator when it loads, GPU or not),
the tests also ask torch which allocator it chose.
"""

import json
import logging
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest
import torch

from bcg_runtime import allocator_env
from bcg_runtime.allocator_env import ALLOC_CONF_VARS, OPT_OUT_VAR, prestartup, strip_cuda_malloc_async

pytestmark = pytest.mark.unit
ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "prestartup_script.py"
CUDA_BUILD = torch.version.cuda is not None
CPU_BUILD_REASON = "torch is a CPU build: it has no CUDA allocator to ask (run under a CUDA build of torch, GPU or not)"
CUDA, ALLOC, HIP = ALLOC_CONF_VARS
SWITCH_LINE = "[BCG] This ComfyUI process now uses PyTorch's native CUDA allocator instead of cudaMallocAsync"


# ----------------------------------------------------------------------------- the pure function
@pytest.mark.parametrize(
    "before,after",
    [
        # ComfyUI's default launch: it sets the variable from nothing
        ({CUDA: "backend:cudaMallocAsync"}, {}),
        # ComfyUI appends to what the user had; the user's options stay
        ({CUDA: "expandable_segments:True,backend:cudaMallocAsync"}, {CUDA: "expandable_segments:True"}),
        ({CUDA: "backend:cudaMallocAsync,expandable_segments:True"}, {CUDA: "expandable_segments:True"}),
        (
            {CUDA: "max_split_size_mb:512,backend:cudaMallocAsync,garbage_collection_threshold:0.6"},
            {CUDA: "max_split_size_mb:512,garbage_collection_threshold:0.6"},
        ),
        # commas inside a list value belong to the list
        (
            {CUDA: "roundup_power2_divisions:[256:1,512:2,>:4],backend:cudaMallocAsync"},
            {CUDA: "roundup_power2_divisions:[256:1,512:2,>:4]"},
        ),
        # torch drops every whitespace character, also inside words
        ({CUDA: " backend : cudaMallocAsync , expandable_segments:True "}, {CUDA: "expandable_segments:True"}),
        ({CUDA: "back end:cuda MallocAsync"}, {}),
        ({CUDA: "\tbackend:\tcudaMallocAsync\n"}, {}),
        # what ComfyUI builds from an empty or comma-terminated user value
        ({CUDA: ",backend:cudaMallocAsync"}, {}),
        ({CUDA: "expandable_segments:True,,backend:cudaMallocAsync"}, {CUDA: "expandable_segments:True"}),
        # repeated, or followed by an explicit native backend
        ({CUDA: "backend:cudaMallocAsync,backend:cudaMallocAsync"}, {}),
        ({CUDA: "backend:cudaMallocAsync,backend:native"}, {CUDA: "backend:native"}),
        # every variable torch may read is cleaned, each on its own
        ({ALLOC: "backend:cudaMallocAsync"}, {}),
        ({HIP: "backend:cudaMallocAsync,expandable_segments:True"}, {HIP: "expandable_segments:True"}),
        (
            {CUDA: "backend:cudaMallocAsync", ALLOC: "backend:cudaMallocAsync,max_split_size_mb:256"},
            {ALLOC: "max_split_size_mb:256"},
        ),
        ({CUDA: "backend:cudaMallocAsync", ALLOC: "expandable_segments:True"}, {ALLOC: "expandable_segments:True"}),
    ],
)
def test_strip_removes_only_the_async_entry(before, after):
    environ = dict(before, PATH="/usr/bin", OTHER="backend:cudaMallocAsync")
    changed = strip_cuda_malloc_async(environ)
    assert changed == [name for name in ALLOC_CONF_VARS if name in before and before[name] != after.get(name)]
    assert environ == dict(after, PATH="/usr/bin", OTHER="backend:cudaMallocAsync")


@pytest.mark.parametrize(
    "env",
    [
        {},
        {CUDA: "backend:native"},
        {CUDA: "backend:native,expandable_segments:True"},
        {CUDA: "expandable_segments:True", ALLOC: "max_split_size_mb:256"},
        {CUDA: ""},
        # torch's names are case sensitive: these are not the async backend (torch rejects them)
        {CUDA: "Backend:cudaMallocAsync"},
        {CUDA: "backend:CudaMallocAsync"},
        {CUDA: "BACKEND:CUDAMALLOCASYNC"},
        {CUDA: "backend:cudamallocasync"},
        # ROCm's own spelling is left to whoever set it (ComfyUI sets only backend:cudaMallocAsync)
        {HIP: "backend:hipMallocAsync"},
        {CUDA: "roundup_power2_divisions:[backend:cudaMallocAsync]"},
    ],
)
def test_strip_leaves_everything_else_alone(env):
    environ = dict(env)
    assert strip_cuda_malloc_async(environ) == []
    assert environ == env


@pytest.mark.parametrize("value", ["1", "true", "YES", " on ", "keep"])
def test_opt_out_keeps_everything(value):
    env = {
        CUDA: "backend:cudaMallocAsync,expandable_segments:True",
        ALLOC: "backend:cudaMallocAsync",
        OPT_OUT_VAR: value,
    }
    environ = dict(env)
    assert strip_cuda_malloc_async(environ) == []
    assert environ == env


@pytest.mark.parametrize("value", ["", "0", "false", "No", "off"])
def test_opt_out_off_values_still_switch(value):
    environ = {CUDA: "backend:cudaMallocAsync", OPT_OUT_VAR: value}
    assert strip_cuda_malloc_async(environ) == [CUDA]
    assert environ == {OPT_OUT_VAR: value}


# ----------------------------------------------------------------------- what the prestartup step logs
def _comfy_modules(cuda_malloc=True, cpu=False):
    args = SimpleNamespace(cuda_malloc=cuda_malloc, disable_cuda_malloc=False, cpu=cpu)
    return {"comfy.cli_args": SimpleNamespace(args=args)}, args


def _bcg_records(caplog):
    return [r for r in caplog.records if r.name == allocator_env.LOGGER_NAME and r.levelno >= logging.INFO]


def test_prestartup_switches_logs_one_line_and_tells_comfyui(caplog):
    caplog.set_level(logging.DEBUG, logger=allocator_env.LOGGER_NAME)
    environ = {CUDA: "expandable_segments:True,backend:cudaMallocAsync"}
    modules, args = _comfy_modules()
    assert prestartup(environ, modules) == [CUDA]
    assert environ == {CUDA: "expandable_segments:True"}
    assert (args.cuda_malloc, args.disable_cuda_malloc) == (False, True)  # as --disable-cuda-malloc leaves them
    (record,) = _bcg_records(caplog)
    message = record.getMessage()
    assert record.levelno == logging.INFO and "\n" not in message
    assert message.startswith(SWITCH_LINE)
    for part in ("--disable-cuda-malloc", "CUDA graphs", f"{OPT_OUT_VAR}=1", "'expandable_segments:True'"):
        assert part in message


def test_prestartup_opt_out_changes_nothing_and_says_bcg_stays_off(caplog):
    environ = {CUDA: "backend:cudaMallocAsync", OPT_OUT_VAR: "1"}
    modules, args = _comfy_modules()
    assert prestartup(environ, modules) == []
    assert environ == {CUDA: "backend:cudaMallocAsync", OPT_OUT_VAR: "1"} and args.cuda_malloc
    (record,) = _bcg_records(caplog)
    assert record.levelno == logging.INFO
    assert f"{OPT_OUT_VAR}=1" in record.getMessage() and "BCG stays off" in record.getMessage()


def test_prestartup_after_torch_import_changes_nothing_and_warns(caplog):
    environ = {CUDA: "backend:cudaMallocAsync"}
    modules, args = _comfy_modules()
    modules["torch"] = object()
    assert prestartup(environ, modules) == []
    assert environ == {CUDA: "backend:cudaMallocAsync"} and args.cuda_malloc
    (record,) = _bcg_records(caplog)
    assert record.levelno == logging.WARNING
    for part in ("torch was imported before", "BCG stays off", "--disable-cuda-malloc"):
        assert part in record.getMessage()


@pytest.mark.parametrize("env", [{}, {CUDA: "backend:native"}, {CUDA: "expandable_segments:True"}])
def test_prestartup_is_silent_when_there_is_nothing_to_switch(caplog, env):
    environ = dict(env)
    modules, args = _comfy_modules(cuda_malloc=False)
    assert prestartup(environ, modules) == []
    assert environ == env and _bcg_records(caplog) == []


@pytest.mark.parametrize("extra", [{}, {OPT_OUT_VAR: "1"}], ids=["switch", "opt-out"])
def test_prestartup_under_cpu_says_nothing(caplog, extra):
    """ComfyUI --cpu still sets cudaMallocAsync; BCG cannot run there and the pack's start-up
    line says so (startup.py), so the allocator step logs nothing above DEBUG (it still switches)."""
    caplog.set_level(logging.DEBUG, logger=allocator_env.LOGGER_NAME)
    environ = {CUDA: "backend:cudaMallocAsync", **extra}
    modules, _ = _comfy_modules(cpu=True)
    assert prestartup(environ, modules) == ([] if extra else [CUDA])
    assert _bcg_records(caplog) == [] and any(r.levelno == logging.DEBUG for r in caplog.records)
    modules["torch"] = object()
    assert prestartup({CUDA: "backend:cudaMallocAsync"}, modules) == [] and _bcg_records(caplog) == []


def test_prestartup_without_comfyui_loaded_still_switches(caplog):
    environ = {CUDA: "backend:cudaMallocAsync"}
    assert prestartup(environ, {}) == [CUDA]
    assert environ == {}


# ----------------------------------------------------------------- the script, as ComfyUI runs it
RUNNER = textwrap.dedent(
    """
    import importlib.util, json, logging, os, sys
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    script, torch_first = sys.argv[1], sys.argv[2] == "1"
    if torch_first:
        import torch
    heavy_before = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "numpy", "comfy"))
    # ComfyUI main.py execute_prestartup_script: the module name is the path without ".py"
    spec = importlib.util.spec_from_file_location(os.path.splitext(script)[0], script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    heavy_after = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "numpy", "comfy"))
    import torch
    try:
        backend = torch.cuda.get_allocator_backend()
    except (AttributeError, RuntimeError):  # a CPU build has no CUDA allocator
        backend = None
    print(json.dumps({
        "env": {k: v for k, v in os.environ.items() if k in __VARS__},
        "script_imported": sorted(set(heavy_after) - set(heavy_before)),
        "backend": backend,
    }))
    """
).replace("__VARS__", repr(ALLOC_CONF_VARS))


def _run_script(env, script=SCRIPT, torch_first=False):
    clean = {k: v for k, v in os.environ.items() if k not in ALLOC_CONF_VARS and k != OPT_OUT_VAR}
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(script), "1" if torch_first else "0"],
        env=dict(clean, **env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def _bcg_lines(stderr):
    return [line for line in stderr.splitlines() if "[BCG]" in line]


def test_script_strips_before_torch_loads_and_keeps_other_options():
    result, stderr = _run_script({CUDA: "backend:cudaMallocAsync,expandable_segments:True"})
    assert result["env"] == {CUDA: "expandable_segments:True"}
    assert result["script_imported"] == []  # no torch, numpy or comfy from the prestartup step
    (line,) = _bcg_lines(stderr)
    assert line.startswith("INFO " + SWITCH_LINE)
    assert f"{OPT_OUT_VAR}=1" in line and "--disable-cuda-malloc" in line
    if CUDA_BUILD:
        assert result["backend"] == "native"


def test_script_strips_every_variable():
    result, stderr = _run_script(
        {CUDA: "backend:cudaMallocAsync", ALLOC: "backend:cudaMallocAsync", HIP: "backend:cudaMallocAsync"}
    )
    assert result["env"] == {}
    assert len(_bcg_lines(stderr)) == 1
    if CUDA_BUILD:
        assert result["backend"] == "native"


def test_script_opt_out_keeps_cuda_malloc_async():
    result, stderr = _run_script({CUDA: "backend:cudaMallocAsync", OPT_OUT_VAR: "1"})
    assert result["env"] == {CUDA: "backend:cudaMallocAsync"}
    (line,) = _bcg_lines(stderr)
    assert "BCG stays off" in line
    if CUDA_BUILD:
        assert result["backend"] == "cudaMallocAsync"


def test_script_after_torch_import_warns_and_changes_nothing():
    result, stderr = _run_script({CUDA: "backend:cudaMallocAsync"}, torch_first=True)
    assert result["env"] == {CUDA: "backend:cudaMallocAsync"}
    (line,) = _bcg_lines(stderr)
    assert line.startswith("WARNING [BCG] torch was imported before")
    if CUDA_BUILD:
        assert result["backend"] == "cudaMallocAsync"


def test_script_is_silent_without_cuda_malloc_async():
    result, stderr = _run_script({CUDA: "expandable_segments:True"})
    assert result["env"] == {CUDA: "expandable_segments:True"}
    assert _bcg_lines(stderr) == []


def test_script_failure_is_logged_and_never_raises(tmp_path):
    shutil.copy(SCRIPT, tmp_path / "prestartup_script.py")
    (tmp_path / "bcg_runtime").mkdir()
    (tmp_path / "bcg_runtime" / "allocator_env.py").write_text("raise RuntimeError('broken helper')\n")
    result, stderr = _run_script({CUDA: "backend:cudaMallocAsync"}, script=tmp_path / "prestartup_script.py")
    assert result["env"] == {CUDA: "backend:cudaMallocAsync"}
    assert "[BCG] prestartup script failed" in stderr and "broken helper" in stderr


# --------------------------------------------- the parser agrees with torch's own allocator choice
AGREEMENT_VALUES = [
    "backend:cudaMallocAsync",
    " backend : cudaMallocAsync ",
    "back end:cuda MallocAsync",
    "\tbackend:\tcudaMallocAsync\n",
    "expandable_segments:True,backend:cudaMallocAsync",
    "roundup_power2_divisions:[256:1,>:4],backend:cudaMallocAsync",
    "backend:cudaMallocAsync,backend:native",
    "backend:native",
    "Backend:cudaMallocAsync",
    "backend:CudaMallocAsync",
    "backend:cudamallocasync",
    "backend::cudaMallocAsync",
    "expandable_segments:True",
]


@pytest.mark.skipif(not CUDA_BUILD, reason=CPU_BUILD_REASON)
def test_parser_matches_torchs_allocator_choice():
    """For each value in each variable: torch picks cudaMallocAsync exactly when the parser finds
    the entry, and picks the native allocator once it is stripped (one process per setting: torch
    picks its allocator when it loads)."""
    from concurrent.futures import ThreadPoolExecutor

    probe = "import torch; print(torch.cuda.get_allocator_backend())"
    clean = {k: v for k, v in os.environ.items() if k not in ALLOC_CONF_VARS}

    def backend(env):
        proc = subprocess.run(
            [sys.executable, "-c", probe], env=dict(clean, **env), capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    cases = []
    for name, values in ((CUDA, AGREEMENT_VALUES), (ALLOC, AGREEMENT_VALUES[:5] + ["backend:native"])):
        for value in values:
            stripped = {name: value}
            strip_cuda_malloc_async(stripped)
            cases.append((name, value, stripped))
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        before = list(pool.map(lambda case: backend({case[0]: case[1]}), cases))
        after = list(pool.map(lambda case: backend(case[2]), cases))
    wrong = [
        (name, value, chosen, now)
        for (name, value, _), chosen, now in zip(cases, before, after)
        if allocator_env.selects_cuda_malloc_async(value) != (chosen == "cudaMallocAsync") or now != "native"
    ]
    assert wrong == [], "(variable, value, torch's choice, choice after stripping)"
