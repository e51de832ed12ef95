"""The models users actually run: city96's ComfyUI-GGUF and attention overrides (core's Model
Attention Backend, KJNodes' Patch Sage Attention KJ), loaded as ComfyUI loads them.

The packs are real: ComfyUI-GGUF and ComfyUI-KJNodes at pinned commits, exported into a git-ignored
folder (``$BCG_PACKS_PATH``, default ``.comfyui/packs`` in this repository; docs/testing.md says
how) and imported once through ComfyUI's own custom-node loader (``bench.packs``). Absent,
or without the ``gguf`` package, the tests skip saying so. GGUF files are written by
``bench.gguf_file`` from the depth-1 synthetic FLUX.1 with the ``gguf`` package's quantizers
(random blocks for the K-quants it cannot quantize), ``img_in.weight`` kept F16 as real files keep
small layers, and loaded through GGUF's own ``UnetLoaderGGUF`` (its ``GGUFModelPatcher``, its
``GGMLTensor`` weights memory-mapped read-only from the file).

Each finding of the issue is a case that failed before and passes now:

1. every GGUF call ran eager (``capture failed: TypeError: GGMLTensor.__init__()``): now every
   quant type replays, bit-equal to the same workflow without BCG;
2. LoRA on the F16 layer of a GGUF file + BCG killed the process (SIGSEGV writing into the
   read-only mapping): BCG no longer asks for in-place LoRA there, and the run is exact;
3. BCG Apply -> LoRA replayed the graph captured without the LoRA (GGUF keeps LoRA on the
   weight's ``patches``, the address unchanged): the fingerprint holds that state, so the LoRA
   and a strength change capture anew and equal eager;
4. an attention override BCG does not own switched BCG off in either order: now the call
   replays around it, the override running at the attention breaks, bit-equal to the override
   alone, and the run's summary names it.

CPU: the CPU stand-in backend. GPU (``gpu`` marker, ``BCG_COMFY_TEST_CPU=0``): real CUDA graphs;
KJNodes' Sage case needs the ``sageattention`` package and a CUDA GPU.
"""

from __future__ import annotations


import pytest
import torch

from bench import gguf_file, packs, synthetic

pytestmark = pytest.mark.comfy

FAMILY = "flux"
SIZE = 64
STEPS = 2
TEXT_TOKENS = 16
#: A layer real GGUF files keep unquantized, and a quantized one: the LoRA touches both.
F16_LAYER, QUANT_LAYER = "img_in", "double_blocks.0.img_attn.qkv"
QUANT_TYPES = ("Q8_0", "Q4_K", "Q5_K", "Q6_K", "Q4_0", "Q5_0", "F16", "BF16")


def load_pack(name: str):
    """The pack ``name`` imported by ComfyUI's custom-node loader (:mod:`bench.packs`), its node
    classes returned; skipped, saying so, where the pack is absent."""
    if packs.pack_dir(name) is None:
        pytest.skip(
            f"{name} not found under {packs.packs_path()} (BCG_PACKS_PATH; docs/testing.md says how to fetch it)"
        )
    return packs.load(name)


@pytest.fixture(scope="module")
def gguf_nodes():
    pytest.importorskip("gguf", reason="the gguf package (pip install gguf) builds and reads GGUF files")
    mappings = load_pack("ComfyUI-GGUF")
    assert "UnetLoaderGGUF" in mappings and "UnetLoaderGGUFAdvanced" in mappings
    return mappings


@pytest.fixture(scope="module")
def gguf_files(tmp_path_factory, gguf_nodes):
    """``name(qtype, family)``: the synthetic model (FLUX.1 by default) written once per quant type into a models folder
    ComfyUI's ``diffusion_models`` (and so GGUF's ``unet_gguf``) list holds."""
    import folder_paths

    folder = tmp_path_factory.mktemp("gguf_models")
    folder_paths.add_model_folder_path("diffusion_models", str(folder))
    written: dict[tuple[str, str], str] = {}

    def name(qtype: str, family: str = FAMILY) -> str:
        if (family, qtype) not in written:
            written[family, qtype] = f"{family}_{qtype}.gguf"
            sd = synthetic.build_state_dict(family, depth=1, seed=0)
            keep = (f"{F16_LAYER}.weight",) if family == FAMILY else ()
            stored = gguf_file.write(sd, str(folder / written[family, qtype]), family, qtype, keep_f16=keep)
            if family == FAMILY:
                assert stored[f"{F16_LAYER}.weight"] == "F16" and stored[f"{QUANT_LAYER}.weight"] == qtype, stored
            assert qtype in stored.values(), stored
            folder_paths.filename_list_cache.clear()
        return written[family, qtype]

    return name


def load_gguf(gguf_nodes, name: str, advanced: bool = False):
    if advanced:
        (model,) = gguf_nodes["UnetLoaderGGUFAdvanced"]().load_unet(name, "default", "default", False)
    else:
        (model,) = gguf_nodes["UnetLoaderGGUF"]().load_unet(name)
    assert type(model).__name__ == "GGUFModelPatcher", type(model)
    return model


def random_lora(model, layers=(F16_LAYER, QUANT_LAYER), strength_scale: float = 0.1) -> dict:
    dm = model.model.diffusion_model
    g = torch.Generator().manual_seed(11)
    lora = {}
    for layer in layers:
        out_features, in_features = dm.get_submodule(layer).weight.shape
        lora[f"diffusion_model.{layer}.lora_up.weight"] = torch.randn(out_features, 4, generator=g) * strength_scale
        lora[f"diffusion_model.{layer}.lora_down.weight"] = torch.randn(4, in_features, generator=g) * strength_scale
    return lora


def comfy_lora(model, lora, strength):
    """What LoraLoaderModelOnly does with a loaded LoRA file: ``comfy.sd.load_lora_for_models``."""
    import comfy.sd

    patched, _ = comfy.sd.load_lora_for_models(model, None, lora, strength, 0)
    return patched


def sample(model, family: str = FAMILY):
    positive = synthetic.make_conditioning(family, TEXT_TOKENS, seed=1)
    with torch.inference_mode():
        return synthetic.sample(model, family, SIZE, SIZE, STEPS, 1.0, positive, positive, seed=3)


@pytest.fixture
def bcg(request):
    """``apply(model)``: BCG Apply (``api.apply``, what the node calls) on real CUDA graphs, or on
    the CPU stand-in where ComfyUI runs on the CPU; sessions are reset after the test."""
    import comfy.model_management as mm

    from bcg_runtime.comfy import api
    from bcg_runtime.comfy.hooks import session_of

    if mm.get_torch_device().type == "cpu":
        request.getfixturevalue("standin_graphs")
    sessions = []

    def apply(model):
        out = api.apply(model, "auto")
        sessions.append(session_of(out))
        return out

    yield apply
    for session in sessions:
        if session is not None:
            session.runner.reset()


def last_run(model) -> dict:
    from bcg_runtime.comfy.hooks import session_of

    run = session_of(model).last_run
    assert run is not None and run["calls"] == STEPS, run
    assert run["replayed"] + sum(run["eager"].values()) == run["calls"], run
    return run


def assert_replays(model, reference, family: str = FAMILY) -> dict:
    """Two runs of ``model`` equal ``reference``; the second replays every call."""
    first = sample(model, family)
    assert torch.equal(first, reference), "BCG's first run differs from the workflow without BCG"
    assert not any("capture failed" in r for r in last_run(model)["eager"]), last_run(model)
    second = sample(model, family)
    assert torch.equal(second, reference), "BCG's replayed run differs from the workflow without BCG"
    run = last_run(model)
    assert run["replayed"] == run["calls"], run
    return run


# ---------------------------------------------------------------- GGUF
@pytest.mark.parametrize("qtype", QUANT_TYPES)
def test_gguf_replays_bit_equal(gguf_nodes, gguf_files, bcg, qtype):
    """Finding 1: every quant type captures, and replays bit-equal to GGUF without BCG."""
    model = load_gguf(gguf_nodes, gguf_files(qtype))
    assert type(model.model.diffusion_model.get_submodule(QUANT_LAYER).weight).__name__ == "GGMLTensor"
    assert_replays(bcg(model), sample(model))


@pytest.mark.parametrize("family,qtype", [("qwen_image", "Q4_K"), ("zimage", "Q4_K"), ("wan", "Q8_0")])
def test_gguf_families_replay_bit_equal(gguf_nodes, gguf_files, bcg, family, qtype):
    """Qwen-Image, Z-Image and Wan 2.x as GGUF files replay bit-equal to GGUF without BCG (Wan as
    Q8_0: on CUDA its fp16 forward overflows to NaN on the K-quants' random blocks, eager too)."""
    model = load_gguf(gguf_nodes, gguf_files(qtype, family))
    assert_replays(bcg(model), sample(model, family), family)


def test_gguf_advanced_loader_replays(gguf_nodes, gguf_files, bcg):
    """UnetLoaderGGUFAdvanced takes the same path."""
    model = load_gguf(gguf_nodes, gguf_files("Q8_0"), advanced=True)
    assert_replays(bcg(model), sample(model))


def test_gguf_lora_never_written_in_place(gguf_nodes, gguf_files, bcg):
    """Finding 2: BCG does not ask GGUF's patcher for in-place LoRA, which would write into the
    read-only file mapping (SIGSEGV); LoRA on the F16 and a quantized layer runs and is exact."""
    model = load_gguf(gguf_nodes, gguf_files("Q4_K"))
    f16 = model.model.diffusion_model.get_submodule(F16_LAYER).weight
    assert f16.device.type != "cpu" or not _writable(f16), "the F16 layer should be the file's read-only mapping"
    bcg_model = bcg(model)
    assert bcg_model.weight_inplace_update is False
    lora = random_lora(model)
    reference = sample(comfy_lora(model, lora, 1.0))
    assert not torch.equal(reference, sample(model))
    assert_replays(comfy_lora(bcg_model, lora, 1.0), reference)


def _writable(t) -> bool:
    from bcg_runtime.comfy.guards import host_memory_writable

    return host_memory_writable([t])


@pytest.mark.parametrize("order", ["bcg_then_lora", "lora_then_bcg"])
def test_gguf_lora_and_strength_change_never_replay_stale(gguf_nodes, gguf_files, bcg, order):
    """Finding 3: GGUF keeps a LoRA on a quantized weight's ``patches`` at an unchanged address
    (the LoRA here touches quantized layers only, so no weight moves). Without LoRA, with it, and
    at another strength, each run equals GGUF without BCG, and the second run of each replays (so
    the graph serving it was captured for that LoRA)."""
    model = load_gguf(gguf_nodes, gguf_files("Q8_0"))
    lora = random_lora(model, layers=(QUANT_LAYER, "single_blocks.0.linear1"))
    plain, full, half = (sample(m) for m in (model, comfy_lora(model, lora, 1.0), comfy_lora(model, lora, 0.5)))
    assert not torch.equal(plain, full) and not torch.equal(full, half)
    if order == "bcg_then_lora":
        bcg_model = bcg(model)
        assert_replays(bcg_model, plain)
        assert_replays(comfy_lora(bcg_model, lora, 1.0), full)
        assert_replays(comfy_lora(bcg_model, lora, 0.5), half)
    else:
        assert_replays(bcg(comfy_lora(model, lora, 1.0)), full)
        assert_replays(bcg(comfy_lora(model, lora, 0.5)), half)


@pytest.mark.smoke
def test_fingerprint_holds_a_weight_subclass_python_state(gguf_nodes, gguf_files):
    """The fingerprint of a GGUF model changes when a weight's ``patches`` change in place."""
    from bcg_runtime.comfy import fingerprint

    model = load_gguf(gguf_nodes, gguf_files("Q8_0"))
    before = fingerprint.take(model)
    weight = model.model.diffusion_model.get_submodule(QUANT_LAYER).weight
    weight.patches = [([(1.0, torch.zeros(1), 1.0, None, None)], f"diffusion_model.{QUANT_LAYER}.weight")]
    try:
        after = fingerprint.take(model)
        assert before != after and "weights" in after.change_from(before)
    finally:
        weight.patches = []
    assert fingerprint.take(model) == before


# ---------------------------------------------------------------- attention overrides
def attention_backend(model):
    """Core's Model Attention Backend (``pytorch attention``)."""
    import comfy_extras.nodes_model_advanced as advanced

    if not hasattr(advanced, "ModelAttentionBackend"):
        pytest.skip("this ComfyUI has no Model Attention Backend node (0.33.0 has it; 0.8.0 predates it)")
    return advanced.ModelAttentionBackend().patch(model, "pytorch attention")[0]


def sage_kj(model):
    """KJNodes' Patch Sage Attention KJ (``auto``)."""
    pytest.importorskip("sageattention", reason="KJNodes' Sage patch needs the sageattention package")
    if not torch.cuda.is_available():
        pytest.skip("SageAttention runs on CUDA only")
    mappings = load_pack("ComfyUI-KJNodes")
    (patched,) = mappings["PathchSageAttentionKJ"]().patch(model, "auto")
    return patched


@pytest.fixture(scope="module")
def flux():
    with torch.inference_mode():
        model = synthetic.load_model(FAMILY, depth=1, seed=0)
    yield model
    del model


@pytest.mark.parametrize("order", ["patch_then_bcg", "bcg_then_patch"])
@pytest.mark.parametrize("patch", [attention_backend, sage_kj], ids=["model_attention_backend", "sage_kj"])
def test_attention_override_replays_around_it(flux, bcg, patch, order):
    """Finding 4: with an attention override BCG does not own, in either order, the calls replay
    bit-equal to the override alone, and the run's summary names the override once."""
    reference = sample(patch(flux))
    model = bcg(patch(flux)) if order == "patch_then_bcg" else patch(bcg(flux))
    run = assert_replays(model, reference)
    notes = [n for n in run["notes"] if n.startswith("attention override")]
    assert len(notes) == 1 and "runs eagerly between graph segments" in notes[0], run


def test_inplace_lora_only_under_comfyuis_own_patcher(flux, gguf_nodes, gguf_files):
    """In-place LoRA is asked for where ComfyUI's own patcher writes into plain, writable
    weights, and never under GGUF's patcher."""
    from bcg_runtime.comfy import guards

    assert guards.inplace_lora_refusal(flux, flux.model.diffusion_model) is None
    model = load_gguf(gguf_nodes, gguf_files("Q8_0"))
    reason = guards.inplace_lora_refusal(model, model.model.diffusion_model)
    assert reason is not None and "GGUFModelPatcher" in reason, reason
