"""The benchmark's stacked tools. An attention backend (``sage+bcg-full``): ComfyUI's registered
attention function put where the launch flag would bind it, in every model module, and restored
after; ``split`` stands in for sage / flash here (their packages need a GPU), the H200 run
measures ``sage``. A step cache (``easycache+bcg-full``): core's node applied to the model. A
compile mode before a BCG mode (``compile-inductor+bcg-full``): core's TorchCompileModel on the
model BCG Apply gets, where BCG steps aside with the reason."""

import sys

import pytest
import torch

from bench.cli import parse_args
from bench.measure import kernel_seconds, run
from bench.report import TOP_KERNELS
from bench.modes import attention_backend, stacked, warmup_cost, with_cache

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


def test_cudnn_first_reorders_the_list_comfyui_s_sdpa_call_sets_and_restores_it(pack, monkeypatch):
    """ComfyUI's SDPA call on CUDA (comfy/ops.py) wraps every large attention in its own backend
    order, flash first, which an order set around it cannot change: the stack edits that list."""
    import comfy.ops
    from torch.nn.attention import SDPBackend

    comfy_order = [
        SDPBackend.FLASH_ATTENTION,
        SDPBackend.CUDNN_ATTENTION,
        SDPBackend.EFFICIENT_ATTENTION,
        SDPBackend.MATH,
    ]
    monkeypatch.setattr(comfy.ops, "SDPA_BACKEND_PRIORITY", comfy_order, raising=False)  # defined on CUDA machines only
    with attention_backend("cudnn"):
        assert comfy.ops.SDPA_BACKEND_PRIORITY is comfy_order  # the list ComfyUI's call reads, changed in place
        assert comfy_order[0] == SDPBackend.CUDNN_ATTENTION and len(comfy_order) == 4
    assert comfy_order == [
        SDPBackend.FLASH_ATTENTION,
        SDPBackend.CUDNN_ATTENTION,
        SDPBackend.EFFICIENT_ATTENTION,
        SDPBackend.MATH,
    ]


def test_a_backend_this_comfyui_lacks_says_what_to_install(pack):
    with pytest.raises(
        RuntimeError, match="attention 'nonexistent' is not available in this ComfyUI \\(install its package"
    ):
        with attention_backend("nonexistent"):
            pass


@pytest.mark.parametrize("cache", ["easycache", "lazycache"])
def test_a_stacked_cache_is_core_s_node_on_a_clone(pack, model, cache):
    cached = with_cache(model, cache)
    assert cached is not model and "easycache" not in model.model_options["transformer_options"]
    holder = cached.model_options["transformer_options"]["easycache"]  # both nodes keep their state there
    assert type(holder).__name__ == {"easycache": "EasyCacheHolder", "lazycache": "LazyCacheHolder"}[cache]


def test_a_stacked_compile_mode_is_torch_compile_model_on_a_clone_after_the_cache(pack, model):
    with stacked("easycache+compile-inductor+bcg-full", model) as (compiled, base):
        assert base == "bcg-full"
        assert compiled.model_options["torch_compile_kwargs"]["backend"] == "inductor"
        assert "easycache" in compiled.model_options["transformer_options"]  # the cache node came first
    assert (
        "torch_compile_kwargs" not in model.model_options
        and "easycache" not in model.model_options["transformer_options"]
    )


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="TorchCompileModel's cudagraphs backend and BCG's graphs need CUDA; run by scripts/gpu_suite.sh",
)
def test_a_bench_row_of_bcg_after_torch_compile_model_says_bcg_stepped_aside(pack):
    """``compile-cudagraphs+bcg-full``: every DiT call runs the compiled model, eager to BCG with
    the reason, and the output equals TorchCompileModel alone; the first run is the compile run."""
    argv = ["--family", FAMILY, "--depth", "1", "--resolutions", "64x64", "--steps", "2", "--repeats", "1", "--no-profile",
            "--modes", "eager,compile-cudagraphs,compile-cudagraphs+bcg-full"]  # fmt: skip
    rows, _ = run(parse_args(argv))
    _, alone, with_bcg = rows
    assert all(row.error is None for row in rows), [row.error for row in rows]
    assert with_bcg.replayed == "0/2" and with_bcg.equals_without_bcg is True, with_bcg
    [(reason, count)] = with_bcg.eager_reasons.items()
    assert count == 2 and reason.startswith(
        "disabled: TorchCompileModel (backend cudagraphs) already replays this model"
    ), reason
    assert with_bcg.first_run_s > 0 and alone.first_run_s > 0


@pytest.mark.parametrize(
    "mode",
    [
        "bcg-full",
        pytest.param(
            "fast",
            marks=pytest.mark.skipif(
                not torch.cuda.is_available(),
                reason="mode fast compiles with inductor for CUDA; run by scripts/gpu_suite.sh",
            ),
        ),
    ],
)
def test_warmup_cost_captures_and_proves_the_whole_plan_on_a_fresh_model(pack, model, mode, standin_graphs):
    """``--warmup-cost``: 2 sizes x 2 text buckets at batch 1 are 4 graphs, each proven, timed (Z-Image's
    exact buckets of 32 in the exact modes: 16 and 48 tokens fall in two, 16 and 32 would share one;
    mode fast keys exact lengths). The exact mode on the CPU stand-in too."""
    assert warmup_cost(model, mode, "64x64,96x96:16,32")["captured"] == (4 if mode == "fast" else 2)
    cost = warmup_cost(model, mode, "64x64,96x96:16,48")
    assert cost["captured"] == 4 and cost["seconds"] > 0, cost["report"]
    assert "4 new captures" in cost["report"] and "replay exact" in cost["report"], cost["report"]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="profiles CUDA kernels; run by scripts/gpu_suite.sh")
def test_the_profile_keeps_the_costliest_kernels_by_name(pack, model):
    """``Row.top_kernels``: the kernels a mode's time went to, costliest first, within the total."""
    from bench import synthetic

    positive, negative = synthetic.make_conditioning(FAMILY, 16, seed=1), synthetic.make_conditioning(FAMILY, 8, seed=2)
    total, split, top = kernel_seconds(model, FAMILY, (64, 64), 2, 1.0, positive, negative)
    assert 0 < len(top) <= TOP_KERNELS and total > 0
    seconds = [k["seconds"] for k in top]
    assert seconds == sorted(seconds, reverse=True) and sum(seconds) <= total + 1e-3
    assert all(k["name"] and k["calls"] > 0 and k["kind"] in (*split, "elementwise/other") for k in top), top
