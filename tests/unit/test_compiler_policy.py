"""The compiler policy (``bcg_runtime/comfy/compiler.py``) without ComfyUI: how the flag of
ComfyUI 0.34+ (``args.disable_comfy_compiler``) is set for one sampling run and given back.

The host's ``malloc_graph_enabled`` and ``args`` are passed in (``CompilerAside``) or stand in for
the host's switch (``OuterSampleHook``): ComfyUI 0.34+ itself is not runnable here; the GPU suite
runs the hook inside real sampling on the assembled host (tests/comfy/test_compiler_cuda.py)."""

import logging
from types import SimpleNamespace

import pytest

from bcg_runtime.comfy import compiler

pytestmark = pytest.mark.unit


def test_the_flag_is_set_for_the_run_only_and_given_back_when_it_raises():
    args = SimpleNamespace(disable_comfy_compiler=False)
    aside = compiler.CompilerAside(lambda device: not args.disable_comfy_compiler, args)
    seen = []
    out, stepped = aside.run("cuda:0", lambda: seen.append(args.disable_comfy_compiler) or "latent")
    assert (out, stepped, seen, args.disable_comfy_compiler) == ("latent", True, [True], False)

    def fails():
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        aside.run("cuda:0", fails)
    assert args.disable_comfy_compiler is False


def test_a_users_disable_comfy_compiler_and_an_off_compiler_are_left_alone():
    user = SimpleNamespace(disable_comfy_compiler=True)
    out, stepped = compiler.CompilerAside(lambda device: True, user).run("cuda:0", lambda: 1)
    assert (out, stepped, user.disable_comfy_compiler) == (1, False, True)
    off = SimpleNamespace(disable_comfy_compiler=False)
    assert compiler.CompilerAside(lambda device: False, off).run("cpu", lambda: 2) == (2, False)
    broken = compiler.CompilerAside(lambda device: 1 / 0, off)
    assert broken.run("cuda:0", lambda: 3) == (3, False) and off.disable_comfy_compiler is False


def test_policy_reads_the_variable_and_names_it_when_it_is_wrong():
    assert compiler.policy({}) == compiler.ASIDE
    assert compiler.policy({compiler.POLICY_VAR: " Inside "}) == compiler.INSIDE
    with pytest.raises(
        ValueError, match=r"BCG_COMFY_COMPILER: 'off' is not a policy; accepted: aside, inside \(default aside\)"
    ):
        compiler.policy({compiler.POLICY_VAR: "off"})


class _Executor:
    """What ComfyUI's WrapperExecutor gives an OUTER_SAMPLE wrapper: callable, with the guider at
    ``class_obj``; records the flag and the session's notes at the moment sampling runs."""

    def __init__(self, args, session):
        self.class_obj = SimpleNamespace(model_patcher=SimpleNamespace(load_device="cuda:0"))
        self.args, self.session, self.flags, self.notes = args, session, [], []

    def __call__(self, *a, **k):
        self.flags.append(self.args.disable_comfy_compiler)
        self.notes.append(list(self.session.sample_notes))
        return "latent"


@pytest.fixture
def host(monkeypatch):
    """A host whose compiler is on (0.34+): its switch, as ``_host_switch`` returns it."""
    args = SimpleNamespace(disable_comfy_compiler=False)
    monkeypatch.setattr(compiler, "_host_switch", lambda: (lambda device: not args.disable_comfy_compiler, args))
    monkeypatch.delenv(compiler.POLICY_VAR, raising=False)
    return args


def _session(refusal=None):
    return SimpleNamespace(permanent_refusal=refusal, sample_notes=[])


def test_the_hook_steps_aside_for_the_run_and_says_so_once(host, caplog):
    caplog.set_level(logging.INFO, logger="bcg_runtime.comfy.compiler")
    session = _session()
    executor = _Executor(host, session)
    assert compiler.OuterSampleHook(session)(executor) == "latent"
    assert executor.flags == [True] and host.disable_comfy_compiler is False
    assert executor.notes == [[compiler.ASIDE_NOTE]] and session.sample_notes == []
    assert [r.getMessage() for r in caplog.records] == [f"[BCG] {compiler.ASIDE_NOTE}"]


@pytest.mark.parametrize("case", ["inside", "refused", "no compiler"])
def test_the_hook_passes_through_under_inside_for_a_refused_model_and_without_a_compiler(
    host, monkeypatch, caplog, case
):
    caplog.set_level(logging.INFO, logger="bcg_runtime.comfy.compiler")
    session = _session("no CUDA" if case == "refused" else None)
    if case == "inside":
        monkeypatch.setenv(compiler.POLICY_VAR, "inside")
    if case == "no compiler":
        monkeypatch.setattr(compiler, "_host_switch", lambda: (None, None))
    executor = _Executor(host, session)
    assert compiler.OuterSampleHook(session)(executor) == "latent"
    assert executor.flags == [False] and executor.notes == [[]] and not caplog.records


def test_without_comfyui_imported_there_is_no_compiler():
    import sys

    if "comfy.cli_args" in sys.modules:
        pytest.skip("ComfyUI is imported in this process (comfy layer): the comfy tests cover the host")
    assert compiler._host_switch() == (None, None)
    assert compiler.compiler_active("cuda:0") is False
