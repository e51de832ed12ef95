"""Mode fast inside real ComfyUI: Z-Image's repeated blocks (``layers`` and the two refiners)
compiled with inductor under the capture, one graph per shape, on a depth-1 model.

What a capture of compiled code proves is a GPU matter: the CPU stand-in records aten ops through
a dispatch mode, which inductor's fused kernels bypass (torch 2.14 compiles under the mode and the
stand-in's replay then differs from the compiled run by ~2e-6, so the proof rejects it; torch 2.11
does not compile under it). So the replay test runs on real CUDA graphs only; the plumbing (the
shared model left as loaded, nothing compiled outside a capture, the report) is checked on any
device. The benchmark (``--modes fast``) measures the speed."""

import logging

import pytest
import torch
from bcg_testing import WARMUP_ONLY, conds, sample_both, session_of

from bcg_runtime.comfy.fast import MAX_RELATIVE_DIFFERENCE, NOT_BIT_EXACT, repeated_block_lists

pytestmark = pytest.mark.comfy
FAMILY = "zimage"


def warm_fast(nodes, model, verify=False):
    """BCG Apply mode fast, warmed for 64x64 at cfg 1 and 2: (model, warm-up text, its records)."""
    positive, negative = conds(FAMILY)
    (fast,) = nodes["BCGApply"].execute(model, "fast", verify=verify, capture=WARMUP_ONLY).args
    fast, text = nodes["BCGWarmupCapture"].execute(fast, "64x64", "", "1,2", positive, negative).args
    print(text)
    return fast, text, session_of(fast).last_warmup["records"]


@pytest.fixture(params=["checkpoint dtype", "comfy_quant fp8", "comfy_quant nvfp4"])
def weights(request, model):
    """The depth-1 model as loaded, and as a comfy_quant checkpoint whose blocks' Linear layers are
    scaled float8_e4m3fn or nvfp4 (their weights are QuantizedTensor subclasses, which run opaque
    to dynamo: the models `bench --weight-dtype comfy_quant_fp8 / _nvfp4 / _mixed` run mode fast
    on; nvfp4 dequantizes in every forward where the GPU has no fp4 matmul, the H200 included).

    Dynamo starts empty for each case, as in a fresh process: the compiled pieces between the
    quantised layers are the same for fp8 and nvfp4 (plain tensors of the same shapes), so the
    second case would otherwise reuse the first one's and compile nothing."""
    torch._dynamo.reset()
    if request.param == "checkpoint dtype":
        yield model
        return
    import comfy.model_management
    import comfy.quant_ops

    from bench import synthetic

    quant = {"comfy_quant fp8": "float8_e4m3fn", "comfy_quant nvfp4": "nvfp4"}[request.param]
    if quant not in getattr(comfy.quant_ops, "QUANT_ALGOS", {}):
        pytest.skip(f"this ComfyUI has no {quant} comfy_quant format")
    yield synthetic.load_model(FAMILY, depth=1, seed=0, quant=quant)
    comfy.model_management.unload_all_models()


def test_fast_mode_leaves_the_shared_model_as_loaded_and_compiles_only_under_capture(pack, weights, standin_graphs):
    from torch._dynamo.utils import counters

    model = weights
    _, nodes = pack
    positive, negative = conds(FAMILY)
    dit = model.model.diffusion_model
    blocks = {name: list(members) for name, members in repeated_block_lists(dit)}
    assert set(blocks) >= {"layers", "noise_refiner", "context_refiner"}, set(blocks)
    _, eager_before = sample_both(FAMILY, model, model, 64, 64, 2, 2.0, positive, negative, seed=3)

    graphs_before_warmup = counters["stats"]["unique_graphs"]
    fast, _, records = warm_fast(nodes, model)
    assert counters["stats"]["unique_graphs"] > graphs_before_warmup, "the warm-up compiled nothing"
    assert {r["label"] for r in records} == {"64x64 txt40 b1", "64x64 txt17 b1"}, records

    # The model every other node shares is as loaded: its own blocks, and eager sampling bit-equal
    # to eager sampling before fast mode ran.
    _, eager = sample_both(FAMILY, fast, model, 64, 64, 2, 2.0, positive, negative, seed=3)
    assert all(list(members) == blocks[name] for name, members in repeated_block_lists(dit))
    assert torch.equal(eager, eager_before)

    # An unwarmed shape runs the plain forward with its reason: no compile during sampling.
    graphs_before = counters["stats"]["unique_graphs"]
    sample_both(FAMILY, fast, model, 64, 96, 1, 1.0, positive, negative, seed=4)
    last = session_of(fast).last_run
    assert last["state"] == "off" and any("not captured: 64x96" in r for r in last["eager"]), last
    assert counters["stats"]["unique_graphs"] == graphs_before, "dynamo compiled during sampling"


@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"
)
def test_fast_mode_replays_its_compiled_graphs_and_says_it_is_not_bit_exact(pack, weights, caplog):
    model = weights
    caplog.set_level(logging.INFO)
    _, nodes = pack
    positive, negative = conds(FAMILY)
    fast, text, records = warm_fast(nodes, model, verify=True)
    captured = [r for r in records if r["status"] == "captured"]
    assert len(captured) == 2 and all(r["exact"] for r in records), text  # cond 40 and uncond 17 tokens
    assert all(r["eager_diff"] is not None and 0 <= r["eager_relative"] < MAX_RELATIVE_DIFFERENCE for r in captured), (
        captured
    )
    assert f"{NOT_BIT_EXACT}: max abs diff" in text and "% of its norm)" in text

    major, minor = torch.cuda.get_device_capability()
    assert session_of(fast).fast.cudnn_attention == ((major, minor) >= (9, 0))  # the H200: cuDNN's attention captured

    out, eager = sample_both(FAMILY, fast, model, 64, 64, 2, 2.0, positive, negative, seed=3)
    assert session_of(fast).last_run["state"] == "replayed", session_of(fast).last_run
    assert out.shape == eager.shape and torch.isfinite(out).all()
    # verify measures fast mode's difference from eager; it does not drop the graphs for it
    assert any(f"verify 64x64 txt40 b1: {NOT_BIT_EXACT}, max abs diff" in r.getMessage() for r in caplog.records)


def test_cudnn_attention_comes_first_only_while_fast_mode_captures(model, monkeypatch):
    """ComfyUI's SDPA call reads ``comfy.ops.SDPA_BACKEND_PRIORITY`` (flash first) at every large
    attention: fast mode puts cuDNN first in that list for its compiled capture, and every other
    call (eager, replay, the rest of the workflow) sees ComfyUI's order."""
    import comfy.ops
    from torch.nn.attention import SDPBackend

    from bcg_runtime.comfy.fast import RegionalCompile
    from bcg_runtime.comfy.sdpa_order import cudnn_attention_preferred

    comfy_order = [
        SDPBackend.FLASH_ATTENTION,
        SDPBackend.CUDNN_ATTENTION,
        SDPBackend.EFFICIENT_ATTENTION,
        SDPBackend.MATH,
    ]
    monkeypatch.setattr(comfy.ops, "SDPA_BACKEND_PRIORITY", comfy_order, raising=False)  # defined on CUDA machines only
    assert not cudnn_attention_preferred(torch.device("cpu"))
    first = []
    plain = lambda: first.append(comfy_order[0])  # noqa: E731
    strategy = RegionalCompile(model.model.diffusion_model, cudnn_attention=True).strategy()
    strategy.capture_forward(plain)()  # what a capture runs
    plain()  # what every other call runs
    assert first == [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION]
    assert comfy_order[0] == SDPBackend.FLASH_ATTENTION and len(comfy_order) == 4


def test_a_mode_that_does_not_exist_names_the_accepted_ones(pack, model):
    _, nodes = pack
    out = nodes["BCGApply"].execute(model, "fastest")  # stops the node with one line (test_input_errors.py)
    assert out.block_execution == "BCG Apply: mode: 'fastest' is not a BCG mode; accepted: auto, breakable, full, fast"
