"""``bind_call`` names a DiT call's arguments exactly as :meth:`inspect.Signature.bind` does (its
fast path runs on every DiT call), and leaves the errors of a call the forward refuses to bind."""

import inspect

import pytest

from bcg_runtime.comfy.decision import bind_call

pytestmark = pytest.mark.unit


class Lumina:  # NextDiT._forward's form in ComfyUI 0.33.0
    def _forward(self, x, timesteps, context, num_tokens, attention_mask=None, transformer_options=None, **kwargs):
        pass


class KeywordOnly:
    def _forward(self, x, t, *, guidance=None, transformer_options=None):
        pass


class Star:  # *args: always through Signature.bind
    def _forward(self, x, *rest, control=None):
        pass


class Forward:  # no _forward: the class's forward
    def forward(self, x, timestep, context=None, y=None, **kwargs):
        pass


def reference(model, args, kwargs):
    sig = inspect.signature(getattr(type(model), "_forward", None) or type(model).forward)
    varkw = next((p.name for p in sig.parameters.values() if p.kind is p.VAR_KEYWORD), None)
    bound = sig.bind(model, *args, **kwargs).arguments
    call = {k: v for k, v in bound.items() if k != "self" and k != varkw}
    call.update(bound.get(varkw, {}) if varkw else {})
    return call


@pytest.mark.parametrize(
    ("model", "args", "kwargs"),
    [
        (Lumina(), (1, 2, 3, 4), {"transformer_options": {}, "control": None}),
        (Lumina(), (1, 2, 3, 4, None), {}),
        (Lumina(), (1,), {"num_tokens": 4, "context": 3, "timesteps": 2, "extra": 5, "attention_mask": 0}),
        (KeywordOnly(), (1,), {"transformer_options": {}, "t": 2, "guidance": 3}),
        (KeywordOnly(), (1, 2), {}),
        (Star(), (1, 2, 3), {"control": 4}),
        (Forward(), (1, 2), {"y": 4, "context": 3, "ref_latents": [5]}),
    ],
)
def test_a_call_is_named_as_signature_bind_names_it(model, args, kwargs):
    call = bind_call(model, args, kwargs)
    expected = reference(model, args, kwargs)
    assert call == expected and list(call) == list(expected)


@pytest.mark.parametrize(
    ("model", "args", "kwargs"),
    [
        (Lumina(), (1, 2, 3), {}),  # num_tokens missing
        (Lumina(), (1, 2, 3, 4), {"x": 1}),  # x twice
        (Lumina(), (1, 2, 3, 4), {"self": 1}),
        (KeywordOnly(), (1, 2), {"unknown": 3}),
        (KeywordOnly(), (1, 2, 3), {}),  # guidance is keyword-only
    ],
)
def test_a_call_the_forward_refuses_raises_its_own_error(model, args, kwargs):
    with pytest.raises(TypeError) as fast:
        bind_call(model, args, kwargs)
    with pytest.raises(TypeError) as slow:
        reference(model, args, kwargs)
    assert str(fast.value) == str(slow.value)
