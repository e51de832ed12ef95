"""The benchmark's stacked tools. An attention backend (``sage+bcg-full``): ComfyUI's registered
attention function put where the launch flag would bind it, in every model module, and restored
after; ``split`` stands in for sage / flash here (their packages need a GPU), the H200 run
measures ``sage``. A step cache (``easycache+bcg-full``): core's node applied to the model."""

import sys

import pytest

from bcg_runtime.bench import attention_backend, with_cache

pytestmark = pytest.mark.comfy
FAMILY = "zimage"


def bound_attention():
    return {
        (name, attr): getattr(module, attr)
        for name, module in list(sys.modules.items())
        if name.startswith("comfy.ldm.") and module is not None
        for attr in ("optimized_attention", "optimized_attention_masked")
        if hasattr(module, attr)
    }


def test_a_registered_backend_replaces_every_default_binding_and_is_restored(pack):
    import comfy.ldm.flux.math  # noqa: F401  (FLUX binds its own copy: it must be swapped too)
    import comfy.ldm.modules.attention as attention

    before = bound_attention()
    default = attention.optimized_attention
    split = attention.get_attention_function("split")
    assert split is not default
    with attention_backend("split"):
        during = bound_attention()
        swapped = {k for k, fn in before.items() if fn is default}
        assert swapped and all(during[k] is split for k in swapped), swapped
        assert all(during[k] is fn for k, fn in before.items() if k not in swapped)  # other functions untouched
    assert bound_attention() == before


def test_a_backend_this_comfyui_lacks_says_what_to_install(pack):
    with pytest.raises(RuntimeError, match="attention 'nonexistent' is not available in this ComfyUI \\(install its package"):
        with attention_backend("nonexistent"):
            pass


@pytest.mark.parametrize("cache", ["easycache", "lazycache"])
def test_a_stacked_cache_is_core_s_node_on_a_clone(pack, model, cache):
    cached = with_cache(model, cache)
    assert cached is not model and "easycache" not in model.model_options["transformer_options"]
    holder = cached.model_options["transformer_options"]["easycache"]  # both nodes keep their state there
    assert type(holder).__name__ == {"easycache": "EasyCacheHolder", "lazycache": "LazyCacheHolder"}[cache]
