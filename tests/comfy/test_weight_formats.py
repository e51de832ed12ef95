"""Every weight format ComfyUI loads works with BCG: fp8, legacy scaled fp8 and comfy_quant
mixed-precision checkpoints, with and without a LoRA (the issue: LoraLoader -> BCG Apply ->
KSampler raised ComfyUI's ``assert inplace_update is False`` on quantized checkpoints).

A depth-1 FLUX.1 (the cheaper of Z-Image and FLUX in ``synthetic``: 0.55B parameters at depth 1
against 0.91B) is written in each format by ``bench.synthetic`` and loaded by
ComfyUI's own loader, ``comfy.sd.load_diffusion_model_state_dict``:

- ``fp8_e4m3fn``: every Linear weight stored as float8_e4m3fn, no scale, no metadata (the
  ``flux1-dev-fp8`` kind of file). ComfyUI keeps fp8 storage where the device computes fp8 (the
  H200: ``unet_dtype`` picks the file's fp8 dtype) or when the loader asks for it (UNETLoader
  ``weight_dtype`` fp8_e4m3fn, i.e. ``model_options["dtype"]``, which the CPU case uses: on CPU
  ComfyUI would otherwise upcast the file to fp32 at load). Ops are ``manual_cast`` (weights cast
  to the compute dtype every forward) and a LoRA is patched into the fp8 tensors in place.
- ``scaled_fp8``: the legacy file with a ``scaled_fp8`` marker and per-layer ``scale_weight``;
  ComfyUI converts it on load (``comfy.utils.convert_old_quants``) into per-layer ``comfy_quant``
  metadata, i.e. mixed-precision ops.
- ``comfy_quant``: the documented mixed-precision layout (QUANTIZATION.md): the blocks' attention
  and MLP layers float8_e4m3fn with ``weight_scale``, one of them nvfp4, each with its
  ``comfy_quant`` JSON; embedders, modulation and the final layer bf16. On CPU ComfyUI emulates
  fp8 and nvfp4 (the layer dequantizes to the compute dtype); the H200 runs fp8 natively and
  emulates nvfp4 (Blackwell only).

Quantized layers re-quantize a patched weight in their ``set_weight``, which asserts the patch is
not in place, so BCG leaves ``weight_inplace_update`` alone on such models
(``guards.inplace_lora_refusal``), and binds every graph to the weights' addresses
(``fingerprint.Fingerprint``).

Each case runs the workflow without BCG (the reference), then ``[LoRA ->] BCG Apply -> BCG Warmup
Capture -> KSampler`` (``comfy.sample.sample``) and asserts: no exception; the output
``torch.equal`` to the reference; the run's DiT calls (one per step at cfg 1) each replayed or
counted eager under a non-empty reason; and, since the weights' addresses are stable (the LoRA is
patched before the warm-up and stays), that every call replayed. A LoRA added *after* the warm-up
on the quantized model moves weights (out-of-place patch): BCG must see the move, the picture must
equal eager with the LoRA, and nothing may replay that was not captured for the new addresses.
Loading and sampling run under ``torch.inference_mode()``, as ComfyUI's executor runs a prompt.

CPU: the nodes on the CPU stand-in backend (``standin_graphs``; it lets ComfyUI's quantized
tensor subclass unwrap itself and records the plain ops underneath). GPU (``gpu`` marker; runs where ComfyUI is on
CUDA, i.e. ``BCG_COMFY_TEST_CPU=0`` as ``scripts/gpu_suite.sh`` sets it): the same cases through
``bcg_runtime.comfy.api`` (the device image may lack PyAV, which the node API imports) on real CUDA
graphs.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

import pytest
import torch

from bench import synthetic

pytestmark = pytest.mark.comfy

FAMILY = "flux"
DEPTH = 1
SIZE = 64
STEPS = 2
CFG = 1.0  # one DiT call per step: ComfyUI skips the uncond at cfg 1
TEXT_TOKENS = 16  # FLUX takes any context length; 16 instead of T5's 256 keeps the CPU forward short
FORMATS = ("fp8_e4m3fn", "scaled_fp8", "comfy_quant")
#: Layers the LoRA patches: an fp8 attention layer, the nvfp4 layer of the mixed checkpoint, and a
#: layer the mixed checkpoint keeps in bf16 (fp8 in the other two formats).
LORA_LAYERS = ("double_blocks.0.img_attn.qkv", "single_blocks.0.linear2", "final_layer.linear")
NVFP4_LAYER = "single_blocks.0.linear2"


# ---------------------------------------------------------------- checkpoints and the LoRA
def mixed_layers() -> dict[str, str]:
    """comfy_quant layer -> format: blocks' attention/MLP layers fp8 (nvfp4 for :data:`NVFP4_LAYER`
    where this ComfyUI knows nvfp4); embedders, modulation and the final layer stay bf16."""
    import comfy.quant_ops

    layers = {layer: "float8_e4m3fn" for layer in synthetic.block_linear_layers(FAMILY, DEPTH) if "mod" not in layer}
    if "nvfp4" in getattr(comfy.quant_ops, "QUANT_ALGOS", {}):
        layers[NVFP4_LAYER] = "nvfp4"
    return layers


def checkpoint(bf16: dict, fmt: str) -> dict:
    """The synthetic FLUX ``bf16`` checkpoint written in ``fmt`` (a new dict: the loader pops keys)."""
    if fmt == "fp8_e4m3fn":
        return synthetic.fp8_checkpoint(bf16, synthetic.linear_weight_keys(FAMILY, DEPTH))
    if fmt == "scaled_fp8":
        return synthetic.scaled_fp8_checkpoint(bf16, synthetic.linear_weight_keys(FAMILY, DEPTH))
    if fmt == "comfy_quant":
        return synthetic.comfy_quant_checkpoint(bf16, mixed_layers())
    raise ValueError(fmt)


def load(bf16: dict, fmt: str):
    """``fmt`` loaded by ``comfy.sd.load_diffusion_model_state_dict``, checked to be built the way
    ComfyUI builds that format: fp8 storage with manual cast, or mixed-precision ops whose
    quantized layers hold QuantizedTensor weights and whose other layers plain ones."""
    import comfy.model_management as mm
    import comfy.quant_ops
    import comfy.sd

    options = {}
    if fmt == "fp8_e4m3fn" and not mm.supports_fp8_compute(mm.get_torch_device()):
        options["dtype"] = torch.float8_e4m3fn  # UNETLoader weight_dtype "fp8_e4m3fn"
    model = comfy.sd.load_diffusion_model_state_dict(checkpoint(bf16, fmt), model_options=options)
    assert model is not None and type(model.model.model_config).__name__ == "Flux"
    dm = model.model.diffusion_model
    qkv, final = dm.double_blocks[0].img_attn.qkv.weight, dm.final_layer.linear.weight
    if fmt == "fp8_e4m3fn":
        assert not model.model.model_config.quant_config
        assert type(qkv) is torch.nn.Parameter and qkv.dtype == torch.float8_e4m3fn
        assert model.model.manual_cast_dtype is not None
        return model
    assert model.model.model_config.quant_config, "ComfyUI did not switch to mixed-precision ops"
    assert isinstance(qkv, comfy.quant_ops.QuantizedTensor) and qkv.storage_dtype == torch.float8_e4m3fn
    if fmt == "scaled_fp8":
        assert isinstance(final, comfy.quant_ops.QuantizedTensor)
    else:
        assert not isinstance(final, comfy.quant_ops.QuantizedTensor)  # a bf16 layer of the mixed file
        if mixed_layers().get(NVFP4_LAYER) == "nvfp4":
            assert dm.get_submodule(NVFP4_LAYER).quant_format == "nvfp4"
    return model


def random_lora(model) -> dict:
    """A rank-4 LoRA in the ``diffusion_model.<layer>.lora_up/lora_down`` format ComfyUI's loader
    maps for every model, on :data:`LORA_LAYERS`; large enough to change the picture."""
    dm = model.model.diffusion_model
    g = torch.Generator().manual_seed(11)
    lora = {}
    for layer in LORA_LAYERS:
        out_features, in_features = dm.get_submodule(layer).weight.shape
        lora[f"diffusion_model.{layer}.lora_up.weight"] = torch.randn(out_features, 4, generator=g) * 0.1
        lora[f"diffusion_model.{layer}.lora_down.weight"] = torch.randn(4, in_features, generator=g) * 0.1
    return lora


def with_lora(model, lora):
    """LoraLoaderModelOnly: ``comfy.sd.load_lora_for_models`` at strength 1; every layer must take."""
    import comfy.sd

    patched, _ = comfy.sd.load_lora_for_models(model, None, lora, 1.0, 0)
    want = {f"diffusion_model.{layer}.weight" for layer in LORA_LAYERS}
    assert want <= set(patched.patches), sorted(patched.patches)
    return patched


def prompt():
    """What ComfyUI's executor wraps every prompt in (``execution.py``: ``torch.inference_mode()``),
    loaders and samplers alike. Outside it 0.8.0's fp8 LoRA patching fails on its own
    (``comfy.float.stochastic_rounding`` writes ``out=`` into a tensor that requires grad)."""
    return torch.inference_mode()


def conditioning():
    return synthetic.make_conditioning(FAMILY, TEXT_TOKENS, seed=1)


def sample(model, positive):
    return synthetic.sample(model, FAMILY, SIZE, SIZE, STEPS, CFG, positive, positive, seed=3)


# ---------------------------------------------------------------- how each host runs the nodes
@dataclass
class Host:
    """BCG Apply, BCG Warmup Capture (with the workflow's positive prompt) and the session lookup,
    the way this host's tests reach them."""

    apply: Callable[[Any], Any]
    warm_up: Callable[[Any, Any], tuple[Any, str]]
    session_of: Callable[[Any], Any]


def run_workflow(host: Host, model, lora: bool):
    """(reference, BCG output, session, warm-up report) for ``[LoRA ->] BCG Apply -> BCG Warmup
    Capture -> KSampler`` on ``model``; the reference, the same workflow without BCG, runs first."""
    positive = conditioning()
    with prompt():
        base = with_lora(model, random_lora(model)) if lora else model
        reference = sample(base, positive)
        warmed, report = host.warm_up(host.apply(base), positive)
        out = sample(warmed, positive)
    return reference, out, host.session_of(warmed), report


def check_run(reference, out, session, report) -> dict:
    """The contract of every case: exact, and every DiT call replayed or eager with a reason."""
    assert torch.equal(out, reference), f"BCG output differs from the workflow without BCG; warm-up:\n{report}"
    run = session.last_run
    assert run is not None and run["calls"] == STEPS, run
    assert run["replayed"] + sum(run["eager"].values()) == run["calls"], run
    assert all(isinstance(reason, str) and reason.strip() for reason in run["eager"]), run
    return run


@pytest.fixture(scope="module")
def bf16_checkpoint():
    """The bf16 FLUX checkpoint every format is written from, on ComfyUI's device."""
    import comfy.model_management as mm

    sd = synthetic.build_state_dict(FAMILY, depth=DEPTH, seed=0, device=mm.get_torch_device())
    yield sd
    sd.clear()


@pytest.fixture(scope="module")
def loaded(bf16_checkpoint):
    """``get(fmt)``: the model of each format, loaded once for the module."""
    cache = {}

    def get(fmt):
        if fmt not in cache:
            with prompt():
                cache[fmt] = load(bf16_checkpoint, fmt)
        return cache[fmt]

    yield get
    cache.clear()
    if torch.cuda.is_available():
        from bcg_testing import release_cuda_memory

        release_cuda_memory(unload=True)


@pytest.fixture
def cpu_host(pack, standin_graphs):
    """The nodes, loaded as ComfyUI loads them, on the CPU stand-in."""
    import comfy.model_management as mm

    if mm.get_torch_device().type != "cpu":
        pytest.skip("CPU stand-in case; where ComfyUI runs on CUDA the cuda cases run instead")
    _, nodes = pack

    def apply(m):
        (bcg_model,) = nodes["BCGApply"].execute(m, "auto").args
        return bcg_model

    def warm_up(m, positive):
        warmed, report = nodes["BCGWarmupCapture"].execute(m, f"{SIZE}x{SIZE}", "", "1", positive).args
        return warmed, report

    sessions = []
    from bcg_runtime.comfy.hooks import session_of

    def tracked(m):
        sessions.append(session_of(m))
        return sessions[-1]

    yield Host(apply, warm_up, tracked)
    for session in sessions:  # recorded CPU graphs hold GiBs: free them before the next case
        if session is not None:
            session.runner.reset()


@pytest.fixture
def cuda_host():
    """``bcg_runtime.comfy.api`` (what the nodes call) on real CUDA graphs."""
    import comfy.model_management as mm

    from bcg_runtime.comfy import api
    from bcg_runtime.comfy.hooks import session_of

    if not torch.cuda.is_available() or mm.get_torch_device().type != "cuda":
        pytest.skip(
            "needs ComfyUI on a CUDA GPU (gpu layer: scripts/gpu_suite.sh, BCG_COMFY_TEST_CPU=0); "
            f"ComfyUI runs on {mm.get_torch_device()}"
        )

    def warm_up(m, positive):
        return m, api.warm_up(m, f"{SIZE}x{SIZE}", "", "1", positive).text()

    sessions = []

    def tracked(m):
        sessions.append(session_of(m))
        return sessions[-1]

    yield Host(lambda m: api.apply(m, "auto"), warm_up, tracked)
    for session in sessions:
        if session is not None:
            session.runner.reset()


# ---------------------------------------------------------------- the cases
def formats_case(host: Host, loaded, fmt: str, lora: bool):
    model = loaded(fmt)
    reference, out, session, report = run_workflow(host, model, lora)
    run = check_run(reference, out, session, report)
    assert session.permanent_refusal is None, session.permanent_refusal
    assert "NOT exact" not in report and "replay exact" in report, report
    assert run["replayed"] == run["calls"], f"addresses are stable here, every call should replay: {run}\n{report}"
    if lora:  # the LoRA changed the picture, so the equality above compared LoRA pictures
        with prompt():
            assert not torch.equal(out, sample(model, conditioning()))


@pytest.mark.parametrize("lora", [False, True], ids=["plain", "lora"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_formats_on_the_cpu_stand_in(cpu_host, loaded, fmt, lora):
    """Exact, every call replayed, LoRA or not, on the CPU stand-in."""
    formats_case(cpu_host, loaded, fmt, lora)


@pytest.mark.gpu
@pytest.mark.parametrize("lora", [False, True], ids=["plain", "lora"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_formats_on_cuda_graphs(cuda_host, loaded, fmt, lora):
    """The same cases on real CUDA graphs (fp8 on the H200's fp8 path, nvfp4 emulated)."""
    formats_case(cuda_host, loaded, fmt, lora)


def lora_after_warmup_case(host: Host, loaded):
    """comfy_quant, LoRA added after the warm-up: ComfyUI re-quantizes each patched layer into a
    new tensor (out of place), so the weights' addresses change. BCG must see the move, the run
    must equal eager with the LoRA, and no call may replay a graph of the old addresses: with no
    new capture nothing replays (under 'warm-up only' every call says 'disabled: weights moved';
    under 'on first call' the new state's first call is captured, or says why it could not be)."""
    model = loaded("comfy_quant")
    positive = conditioning()
    lora = random_lora(model)
    with prompt():
        reference = sample(with_lora(model, lora), positive)
        assert not torch.equal(reference, sample(model, positive))  # so a stale replay could not pass
        warmed, report = host.warm_up(host.apply(model), positive)
        session = host.session_of(warmed)
        captures, state_at_warmup = session.runner.stats.captures, session.last_state
        out = sample(with_lora(warmed, lora), positive)
    run = check_run(reference, out, session, report)
    assert captures >= 1, report
    change = session.last_state.change_from(state_at_warmup)
    assert "moved" in change, change  # "weights (or buffers) moved"
    if session.runner.stats.captures == captures:  # nothing captured for the new addresses
        assert run["replayed"] == 0, run
    else:  # captured on first call: that call ran eager while it was captured
        assert sum(run["eager"].values()) >= 1, run


def test_lora_after_warmup_on_a_quantized_model_on_the_cpu_stand_in(cpu_host, loaded):
    lora_after_warmup_case(cpu_host, loaded)


@pytest.mark.gpu
def test_lora_after_warmup_on_a_quantized_model_on_cuda_graphs(cuda_host, loaded):
    lora_after_warmup_case(cuda_host, loaded)


def test_this_comfyui_still_patches_quantized_layers_out_of_place():
    """What this module and ``guards.inplace_lora_refusal`` rely on holds for the ComfyUI under
    test: legacy scaled fp8 files are converted on load, and mixed-precision layers have a
    ``set_weight`` that refuses in-place patches."""
    import comfy.ops
    import comfy.utils

    assert callable(getattr(comfy.utils, "convert_old_quants", None))
    source = inspect.getsource(comfy.ops.mixed_precision_ops)
    assert "def set_weight" in source and "assert inplace_update is False" in source, (
        "ComfyUI's mixed-precision Linear changed how it takes patches: revisit guards.inplace_lora_refusal"
    )


@pytest.mark.parametrize(
    "weight_dtype,quant,storage",
    [("comfy_quant_fp8", "float8_e4m3fn", torch.float8_e4m3fn), ("comfy_quant_nvfp4", "nvfp4", torch.uint8)],
)
def test_a_synthetic_model_loads_with_its_block_layers_quantized(pack, weight_dtype, quant, storage):
    """The bench's ``--weight-dtype comfy_quant_fp8 / comfy_quant_nvfp4``: every Linear of the
    repeated blocks loads as a comfy_quant layer of that format (nvfp4 packs two values per uint8),
    the rest of the model keeps ComfyUI's dtype, and the model samples."""
    import comfy.model_management
    import comfy.quant_ops

    from bench.setup import load_bench_model

    if quant not in getattr(comfy.quant_ops, "QUANT_ALGOS", {}):
        pytest.skip(f"this ComfyUI has no {quant} comfy_quant format")
    model = load_bench_model("zimage", 1, weight_dtype, None)
    dm = model.model.diffusion_model
    layers = synthetic.block_linear_layers("zimage", 1)
    assert layers and all(name.startswith("layers.") for name in layers), layers
    assert {dm.get_submodule(name).quant_format for name in layers} == {quant}
    assert {dm.get_submodule(name).weight.storage_dtype for name in layers} == {storage}
    assert dm.x_embedder.weight.dtype == model.model.get_dtype()
    positive = synthetic.make_conditioning("zimage", 12, seed=1)
    out = synthetic.sample(model, "zimage", 64, 64, 1, 1.0, positive, positive, seed=0)
    assert torch.isfinite(out).all()
    comfy.model_management.unload_all_models()


def test_the_mixed_checkpoint_keeps_the_first_and_last_block_in_fp8(pack):
    """The bench's ``--weight-dtype comfy_quant_mixed`` (an nvfp4/fp8 mixed release): the blocks'
    Linear layers nvfp4, the first and the last block's float8_e4m3fn, each loaded in its format."""
    import comfy.model_management
    import comfy.quant_ops

    from bench.setup import load_bench_model

    if "nvfp4" not in getattr(comfy.quant_ops, "QUANT_ALGOS", {}):
        pytest.skip("this ComfyUI has no nvfp4 comfy_quant format")
    layers = synthetic.quantized_layers("zimage", 3, synthetic.MIXED_NVFP4_FP8)
    by_block = {}
    for name, fmt in layers.items():
        by_block.setdefault(int(name.split(".")[1]), set()).add(fmt)
    assert by_block == {0: {"float8_e4m3fn"}, 1: {"nvfp4"}, 2: {"float8_e4m3fn"}}, by_block
    model = load_bench_model("zimage", 3, "comfy_quant_mixed", None)
    dm = model.model.diffusion_model
    assert {name: dm.get_submodule(name).quant_format for name in layers} == layers
    positive = synthetic.make_conditioning("zimage", 12, seed=1)
    out = synthetic.sample(model, "zimage", 64, 64, 1, 1.0, positive, positive, seed=0)
    assert torch.isfinite(out).all()
    comfy.model_management.unload_all_models()


def test_the_server_benchmarks_fp8_file_is_the_whole_model_quantized(pack, tmp_path):
    """``bench.server``'s ``--models FAMILY:fp8_scaled`` file (``comfy_base.write_unet``), made a
    layer at a time so a full-size model never sits on the device twice, holds exactly what
    quantizing the whole checkpoint at once gives, with its metadata."""
    from safetensors import safe_open

    from bench import comfy_base

    path = comfy_base.write_unet("zimage", tmp_path / "z.safetensors", depth=2, weights="fp8_scaled")
    layers = synthetic.quantized_layers("zimage", 2, "float8_e4m3fn")
    want = synthetic.comfy_quant_checkpoint(synthetic.build_state_dict("zimage", depth=2), layers)
    with safe_open(str(path), "pt") as f:
        assert set(f.keys()) == set(want) and f.metadata() == synthetic.family_info("zimage").metadata(2)
        for key, tensor in want.items():
            got = f.get_tensor(key)
            assert got.dtype == tensor.dtype and torch.equal(
                got.reshape(-1).view(torch.uint8), tensor.reshape(-1).view(torch.uint8)
            ), key
    assert {t.dtype for k, t in want.items() if k.endswith(".weight") and k[: -len(".weight")] in layers} == {
        torch.float8_e4m3fn
    }
