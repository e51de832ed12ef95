"""The fingerprint's code state (code_state.CodeState): every rebinding of what a forward calls by
name is a change that names itself, and nothing else is one (so graphs are not dropped for
nothing)."""

import sys
import types

import pytest
import torch

from bcg_runtime.comfy import code_state, host_facts

pytestmark = pytest.mark.unit

MODULE = "comfy.ldm.bcg_unit_model"


def rope(x):
    return x


class Block(torch.nn.Module):
    def forward(self, x):
        return rope(x)


@pytest.fixture
def module(monkeypatch):
    """A model module as ComfyUI's look: a function, a constant, a class; registered under a
    watched name for the test only."""
    m = types.ModuleType(MODULE)
    m.rope, m.LIMIT, m.Block, m.TABLE = rope, 1.5, Block, {"a": 1}
    monkeypatch.setitem(sys.modules, MODULE, m)
    return m


def _changes(change, classes=(Block,)):
    before = code_state.CodeState.take(classes)
    change()
    now = code_state.CodeState.take(classes)
    return now.changes_from(before)


def test_a_change_reads_the_same_either_way_round(module):
    before = code_state.CodeState.take([Block])
    module.rope = lambda x: x * 3
    now = code_state.CodeState.take([Block])
    assert now.changes_from(before) == before.changes_from(now) == [f"{MODULE}.rope"]
    assert now != before and before != now


def test_a_rebound_function_constant_or_class_method_is_named(module, monkeypatch):
    assert _changes(lambda: setattr(module, "rope", lambda x: x * 2)) == [f"{MODULE}.rope"]
    assert _changes(lambda: setattr(module, "LIMIT", 2.5)) == [f"{MODULE}.LIMIT"]
    assert _changes(lambda: monkeypatch.setattr(Block, "forward", lambda self, x: x)) == [f"{__name__}.Block.forward"]
    assert _changes(lambda: setattr(module, "NEW", object())) == [f"{MODULE}.NEW"]
    assert _changes(lambda: delattr(module, "TABLE")) == [f"{MODULE}.TABLE"]


def test_a_torch_function_rebound_is_named(monkeypatch):
    gelu = torch.nn.functional.gelu
    assert _changes(lambda: monkeypatch.setattr(torch.nn.functional, "gelu", lambda *a, **k: gelu(*a, **k))) == [
        "torch.nn.functional.gelu"
    ]


def test_nothing_rebound_is_no_change_and_states_are_equal_with_equal_hashes(module):
    before = code_state.CodeState.take([Block])
    module.LIMIT = float("1.5")  # an equal number at a new address reads the same
    module.TABLE["b"] = 2  # a container edited in place: not seen (stated in the module docstring)
    now = code_state.CodeState.take([Block])
    assert now.changes_from(before) == [] and now == before and hash(now) == hash(before)


def test_a_submodule_or_module_imported_since_is_no_change(module, monkeypatch):
    before = code_state.CodeState.take([Block])
    monkeypatch.setattr(module, "sub", types.ModuleType(f"{MODULE}.sub"), raising=False)
    monkeypatch.setitem(sys.modules, "comfy.ldm.bcg_unit_other", types.ModuleType("comfy.ldm.bcg_unit_other"))
    now = code_state.CodeState.take([Block])
    assert now == before and before == now  # both ways: a fingerprint compares its parts either way round


def test_a_module_replaced_in_sys_modules_is_a_change(module, monkeypatch):
    before = code_state.CodeState.take([])
    twin = types.ModuleType(MODULE)
    twin.__dict__.update(vars(module))
    monkeypatch.setitem(sys.modules, MODULE, twin)
    assert code_state.CodeState.take([]).changes_from(before) == [f"{MODULE}.(the module itself, replaced)"]


def test_what_the_lists_leave_out_is_no_change(module, monkeypatch):
    monkeypatch.setitem(host_facts.REBOUND_OUTSIDE_THE_FORWARD, (MODULE, "LIMIT"), "a test's counter")
    assert _changes(lambda: setattr(module, "LIMIT", 9.0)) == []
    # what torch.compile adds to the globals of the code it compiles
    assert _changes(lambda: setattr(module, "__compiled_fn_3", rope)) == []
    # the attention functions are the fingerprint's "attention function" part
    assert _changes(lambda: setattr(module, "optimized_attention_masked", rope)) == []
    # what torch.compile's first use patches on torch.nn.Module (no forward runs either)
    assert _changes(lambda: monkeypatch.setattr(Block, "__init__", lambda self: None)) == []
    assert _changes(lambda: monkeypatch.setattr(Block, "___needs_generation_tag_patch", False, raising=False)) == []
    around = types.ModuleType("comfy.samplers")
    monkeypatch.setitem(sys.modules, "comfy.samplers", around)
    assert not code_state.watched_module("comfy.samplers") and code_state.watched_module(MODULE)
    assert _changes(lambda: setattr(around, "sampling_function", rope)) == []


def test_the_classes_along_the_mro_are_each_held_once_without_object():
    classes = code_state.along_mro([Block, torch.nn.Linear, torch.nn.Parameter])
    assert {Block, torch.nn.Linear, torch.nn.Module, torch.nn.Parameter, torch.Tensor} <= set(classes)
    assert object not in classes and len(classes) == len(set(classes))


def test_retake_sees_a_rebinding_since(module):
    state = code_state.CodeState.take([Block])
    module.rope = lambda x: -x
    assert state.retake() != state
    assert state.retake().describe_change(state) == f"ComfyUI code rebound ({MODULE}.rope)"


def test_an_entry_of_sys_modules_that_is_no_module_is_passed_by(monkeypatch):
    monkeypatch.setitem(sys.modules, "comfy.ldm.bcg_unit_none", None)
    monkeypatch.setitem(sys.modules, "comfy.ldm.bcg_unit_slots", 3)
    state = code_state.CodeState.take([])
    assert "comfy.ldm.bcg_unit_none" not in state.modules and "comfy.ldm.bcg_unit_slots" not in state.modules


def test_a_namespace_that_grew_between_its_keys_and_values_is_read_in_one_pass():
    """A dictionary is read as its keys, then its values; another thread that adds a name in
    between (an import setting a package's submodule attribute) makes them disagree, and the
    dictionary is read again as items, keys and values of one moment."""
    from bcg_runtime.comfy.code_state import _Namespace

    class Growing(dict):
        def values(self):
            self["late"] = 2  # what another thread does between the two passes
            return super().values()

    ns = _Namespace(None, Growing(early=1))
    assert (ns.keys, ns.values) == (("early", "late"), (1, 2))
    plain = _Namespace(None, {"early": 1})
    assert (plain.keys, plain.values) == (("early",), (1,))
