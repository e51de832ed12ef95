"""The per-call token (module_token.modules_token): every change of a module's instance state that
it is meant to cover moves it, and a call with nothing changed leaves it equal."""

import pytest
import torch

from bcg_runtime.comfy import code_state, module_token

pytestmark = pytest.mark.unit


def _model():
    return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU()))


def _moved(change) -> bool:
    model = _model()
    model[0].forward = lambda x: x  # an override present at the run's start (an object patch)
    watched = module_token.module_dicts(model)
    before = module_token.modules_token(watched)
    change(model)
    return module_token.modules_token(watched) != before


CHANGES = {
    "nothing": lambda m: None,
    "an override on a module that had none": lambda m: setattr(m[1][0], "forward", lambda x: x),
    "an existing override replaced": lambda m: setattr(m[0], "forward", lambda x: x + 1),
    "an existing override removed": lambda m: delattr(m[0], "forward"),
    "a new attribute": lambda m: setattr(m[1][1], "approximate_scale", 2.0),
    "a forward hook": lambda m: m[1][0].register_forward_hook(lambda mod, a, out: out),
    "a forward pre-hook": lambda m: m[1].register_forward_pre_hook(lambda mod, a: a),
    "a global forward hook": lambda m: torch.nn.modules.module.register_module_forward_hook(
        lambda mod, a, out: out
    ).remove(),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_each_covered_change_moves_the_token(name):
    assert _moved(CHANGES[name]) is (name != "nothing")


def test_an_empty_watch_outside_a_run():
    watched = module_token.module_dicts(None)
    assert module_token.modules_token(watched) == module_token.modules_token(watched)


def test_an_attention_function_rebound_within_a_run_moves_the_token(monkeypatch):
    """A model wrapper that swaps the attention kernel for some steps does it inside the run, where
    only the token looks: a ComfyUI model module's ``optimized_attention*`` and torch's SDPA."""
    import sys
    import types

    model_module = types.ModuleType("comfy.ldm.bcg_unit_attention")
    model_module.optimized_attention = lambda *a: None
    monkeypatch.setitem(sys.modules, model_module.__name__, model_module)
    monkeypatch.setattr(code_state, "_NAMES", (-1, []))  # rescan: the module count may not have moved
    watched = module_token.module_dicts(_model())
    before = module_token.modules_token(watched)
    model_module.optimized_attention = lambda *a: 1
    now = module_token.modules_token(watched)
    assert now != before
    sdpa = torch.nn.functional.scaled_dot_product_attention
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", lambda *a, **k: sdpa(*a, **k))
    assert module_token.modules_token(watched) != now
