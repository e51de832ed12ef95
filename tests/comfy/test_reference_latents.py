"""Edit workflows: FLUX.1 Kontext (``Flux``) and Qwen-Image-Edit / -2511 (``QwenImage``) called with
reference latents, inside real ComfyUI.

ComfyUI's ReferenceLatent / TextEncodeQwenImageEdit(Plus) nodes put ``reference_latents`` into the
conditioning; ``model_base`` hands them to the DiT as the ``ref_latents`` list. Each reference's
shape is part of the signature and its *values* are copied into the graph's static inputs at every
replay: a new image of a known size must replay without a new capture and equal eager (a graph
that kept reading the old reference would return the old image's result), and a new size is a new
signature named by its ``ref WxH`` label. CPU stand-in on depth-1 models; the test marked ``gpu``
repeats the core of it at the real width on CUDA graphs.

Source audit (ComfyUI 0.33.0):

flux (``bcg_runtime/comfy/models/flux.py``). FLUX.1 Kontext is the same class and checkpoint layout as dev
(``default_ref_method`` stays "offset"); ``ref_latents`` is the list ``model_base.Flux.extra_conds`` builds from
the conditioning's ``reference_latents`` (ReferenceLatent node, one entry per chained image), moved to the device
by ``_apply_model``. The reference path, read for host syncs in ``comfy/ldm/flux/model.py``, has none:

- model.py:360-392: a Python loop over the list (its length is in the key) whose RoPE offsets
  (``index``, ``h_offset``, ``w_offset``) come from ``ref.shape`` and ``ref_index_scale`` only;
  the branch is chosen by ``ref_latents_method``, a string argument (the FluxKontextMultiReferenceLatentMethod
  node's ``reference_latents_method``; its value is in the key) or else ``params.default_ref_method``,
  which only an object patch changes (FluxKVCache: object patches are in the address state, and
  that node's attention patches make its calls eager anyway).
- model.py:393-396 ("index_timestep_zero"): ``timestep`` concatenated with ``timestep * 0`` on the
  device and ``timestep_zero_index`` built from token counts; layers.py:139 ``apply_mod`` then
  slices by those Python ints: shape-derived. (Stock 0.33 raises there for FLUX.1's per-block
  modulation, eager or not; the path serves FLUX.2's global modulation.)
- ``process_img`` (model.py:314-342) builds position ids with ``torch.linspace`` over Python
  numbers from shapes and ``rope_options`` (in the key).
- model.py:398: ``transformer_options["reference_image_num_tokens"]`` is written for patches
  (bookkeeping in options.py).

qwen_image (``bcg_runtime/comfy/models/qwen_image.py``). ``ref_latents`` is the list that
``model_base.QwenImage.extra_conds`` builds from the conditioning's ``reference_latents``
(TextEncodeQwenImageEdit / TextEncodeQwenImageEditPlus, ReferenceLatent), each ``[B, 16, 1, h, w]``. Edit (2509)
checkpoints have Qwen-Image's layout and config; Edit-2511 adds one empty buffer, ``__index_timestep_zero__``, from
which detection sets ``default_ref_method="index_timestep_zero"``. The reference path, read for host syncs in
``comfy/ldm/qwen_image/model.py``, has none:

- model.py:459-491: a Python loop over the list (its length is in the key) whose RoPE ``index``
  and offsets come from ``ref.shape`` only; the branch is chosen by ``ref_latents_method``, a
  string argument whose value is in the key, or else ``self.default_ref_method``, fixed at load
  from the checkpoint layout (or an object patch: in the address state). ``process_img``
  (model.py:403-427) builds position ids with ``torch.linspace`` over Python numbers from shapes.
- model.py:492-495 (2511, "index_timestep_zero"): ``timestep`` concatenated with ``timestep * 0``
  on the device; ``timestep_zero_index`` is the image token count, a Python int from the shape,
  by which ``_apply_gate`` / ``_modulate`` (model.py:250-266) slice; the block (l.282) and the
  output (l.561) take the first half of the doubled ``temb`` by ``chunk``: shapes only.
- model.py:497: ``transformer_options["reference_image_num_tokens"]`` is written for patches
  (bookkeeping in options.py).
"""

import pytest
import torch
from bcg_testing import WARMUP_ONLY, session_of

from bench import synthetic

pytestmark = pytest.mark.comfy
FIRST = "first call, captured"
STEPS = 2
#: Prompt token counts (positive, negative) here. FLUX's are short and equal: T5's padding to 256
#: (tested with the family's other tests) would only make every CPU forward here slower, and equal
#: lengths keep FLUX's cond and uncond in one b2 call as padding does. Qwen-Image's differ, so its
#: cond and uncond are separate b1 signatures, as in real workflows.
PROMPT_LENGTHS = {"flux": (24, 24), "qwen_image": (40, 17)}
NO_CUDA = "needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"


def edit_conds(family, refs, method=None, lengths=None):
    """Positive and negative of an edit workflow: both carry the references (the negative of a
    Kontext workflow is the positive zeroed out, Qwen-Image-Edit encodes both with the image)."""
    pos_len, neg_len = lengths or PROMPT_LENGTHS[family]
    positive = synthetic.make_conditioning(family, pos_len, seed=1)
    negative = synthetic.make_conditioning(family, neg_len, seed=2)
    return synthetic.with_reference_latents(positive, refs, method), synthetic.with_reference_latents(
        negative, refs, method
    )


def expected_first_calls(family, cfg, suffix):
    """The first-call captures of one run at 64x64: FLUX's cond and uncond (equal lengths) in one
    b2 call at cfg > 1; Qwen-Image's lengths differ, so two b1 signatures."""
    pos_len, neg_len = PROMPT_LENGTHS[family]
    if family == "flux":
        return {f"{FIRST}: 64x64 txt{pos_len} b{2 if cfg > 1 else 1}{suffix}": 1}
    lengths = (pos_len, neg_len) if cfg > 1 else (pos_len,)
    return {f"{FIRST}: 64x64 txt{n} b1{suffix}": 1 for n in lengths}


#: Models under test: FLUX.1 (Kontext's layout), Qwen-Image (Edit/2509's layout) and the Edit-2511
#: layout (Qwen-Image's keys plus the empty ``__index_timestep_zero__`` buffer, from which ComfyUI's
#: detection sets ``default_ref_method="index_timestep_zero"``: references modulated with timestep 0).
MODELS = {"flux": "flux", "qwen_image": "qwen_image", "qwen_image_edit_2511": "qwen_image"}


@pytest.fixture(scope="module", params=list(MODELS))
def edit_model(request):
    """``(family, model)``, one model alive at a time (module scope, grouped by param)."""
    family = MODELS[request.param]
    if request.param != "qwen_image_edit_2511":
        return family, synthetic.load_model(family, depth=1, seed=0)
    import comfy.sd

    sd = synthetic.build_state_dict(family, depth=1, seed=0)
    sd["__index_timestep_zero__"] = torch.tensor([])
    model = comfy.sd.load_diffusion_model_state_dict(sd)
    del sd
    method = getattr(model.model.diffusion_model, "default_ref_method", None)
    assert method == "index_timestep_zero", (
        f"ComfyUI did not detect the Edit-2511 layout (default_ref_method {method!r})"
    )
    return family, model


def _sample_both(bcg_model, model, family, cfg, positive, negative, seed):
    out = synthetic.sample(bcg_model, family, 64, 64, STEPS, cfg, positive, negative, seed=seed)
    eager = synthetic.sample(model, family, 64, 64, STEPS, cfg, positive, negative, seed=seed)
    return out, eager


@pytest.mark.parametrize("cfg", [1.0, 2.0])
def test_one_and_two_references_replay_exactly_and_read_new_reference_values(pack, edit_model, standin_graphs, cfg):
    family, model = edit_model
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)

    one = [synthetic.make_reference_latent(family, 64, 64, seed=11)]
    out, eager = _sample_both(bcg_model, model, family, cfg, *edit_conds(family, one), seed=3)
    assert torch.equal(out, eager), (out - eager).abs().max().item()
    run = session.last_run
    first = expected_first_calls(family, cfg, " ref 64x64")
    assert run["eager"] == first, run
    assert run["replayed"] == run["calls"] - len(first) == (STEPS - 1) * len(first), run

    # Two references of different sizes: a new signature naming both, exact.
    sizes = ((64, 64), (64, 96))
    old = [synthetic.make_reference_latent(family, w, h, seed=12 + i) for i, (w, h) in enumerate(sizes)]
    out_old, eager_old = _sample_both(bcg_model, model, family, cfg, *edit_conds(family, old), seed=4)
    assert torch.equal(out_old, eager_old), (out_old - eager_old).abs().max().item()
    run = session.last_run
    first = expected_first_calls(family, cfg, " ref 64x64+64x96")
    assert run["eager"] == first, run
    assert run["replayed"] == (STEPS - 1) * len(first), run
    captures = session.runner.stats.captures

    # New images of the same sizes (the stale-input danger): every call replays, nothing is
    # captured, and the result is the new images' (same noise and prompt: only references differ,
    # and they change the result, so a graph still reading the captured references would fail).
    new = [synthetic.make_reference_latent(family, w, h, seed=22 + i) for i, (w, h) in enumerate(sizes)]
    out_new, eager_new = _sample_both(bcg_model, model, family, cfg, *edit_conds(family, new), seed=4)
    assert not torch.equal(eager_new, eager_old)
    assert torch.equal(out_new, eager_new), (out_new - eager_new).abs().max().item()
    run = session.last_run
    assert run["replayed"] == run["calls"] and run["eager"] == {}, run
    assert session.runner.stats.captures == captures


def test_a_new_reference_size_is_a_new_signature_with_its_label(pack, edit_model, standin_graphs):
    family, model = edit_model
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    positive, _ = edit_conds(family, [synthetic.make_reference_latent(family, 64, 64, seed=41)])
    # The workflow's positive (with its reference) at cfg 1: the warm-up captures exactly that call.
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, None).args
    assert "ref 64x64: captured" in report and "NOT exact" not in report, report
    session = session_of(warmed)

    # The warmed reference size, a new image: replayed and exact.
    positive, negative = edit_conds(family, [synthetic.make_reference_latent(family, 64, 64, seed=42)])
    out, eager = _sample_both(warmed, model, family, 1.0, positive, negative, seed=5)
    assert torch.equal(out, eager)
    assert session.last_run["replayed"] == STEPS, session.last_run

    # Another reference size: not captured, eager under its own label.
    positive, negative = edit_conds(family, [synthetic.make_reference_latent(family, 96, 64, seed=43)])
    out, eager = _sample_both(warmed, model, family, 1.0, positive, negative, seed=5)
    assert torch.equal(out, eager)
    txt = PROMPT_LENGTHS[family][0]
    assert session.last_run["eager"] == {f"not captured: 64x64 txt{txt} b1 ref 96x64": STEPS}, session.last_run


def test_the_reference_method_is_in_the_key_and_the_label(pack, edit_model, standin_graphs):
    """``reference_latents_method`` (FluxKontextMultiReferenceLatentMethod node) steers Python (RoPE
    offsets): the same references under another method are a new
    signature, exact, named in the label."""
    family, model = edit_model
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    refs = [
        synthetic.make_reference_latent(family, 64, 64, seed=51),
        synthetic.make_reference_latent(family, 64, 96, seed=52),
    ]
    txt = PROMPT_LENGTHS[family][0]
    results = {}
    # FLUX.1 also "uxo" (USO/UNO offsets). Not "index_timestep_zero" there: stock ComfyUI 0.33's
    # FLUX.1 blocks cannot run it (apply_mod broadcasts a doubled batch into one); Qwen-Image's
    # timestep-zero path is the Edit-2511 model's default, covered by every test on that model.
    methods = ("offset", "index") + (("uxo",) if family == "flux" else ())
    for method in methods:
        positive, negative = edit_conds(family, refs, method)
        out, eager = _sample_both(bcg_model, model, family, 1.0, positive, negative, seed=6)
        assert torch.equal(out, eager), (method, (out - eager).abs().max().item())
        assert session.last_run["eager"] == {f"{FIRST}: 64x64 txt{txt} b1 ref 64x64+64x96 ({method})": 1}, (
            session.last_run
        )
        results[method] = eager
    assert not torch.equal(results["offset"], results["index"])


# ------------------------------------------------------------------------------------- gpu layer
GPU_DEPTH = {"flux": (2, 4), "qwen_image": 4}


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason=NO_CUDA)
@pytest.mark.parametrize("family", list(GPU_DEPTH))
@pytest.mark.parametrize("mode", ["breakable", "full"])
def test_full_width_references_replay_exactly_on_cuda(family, mode):
    """The real width (hidden 3072) at reduced depth (the reference path is before the blocks; depth
    only multiplies time): 512x512 with one and two references (512x512, 768x512), cfg 1 and 2.5,
    on CUDA graphs through bcg_runtime.comfy.api (the GPU image has no PyAV for the node shells)."""
    from bcg_testing import release_cuda_memory

    from bcg_runtime.comfy import api
    from bcg_runtime.comfy.hooks import session_of as session_of_model

    model = synthetic.load_model(family, depth=GPU_DEPTH[family], seed=0, device="cuda")
    try:
        bcg_model = api.apply(model, mode)
        session = session_of_model(bcg_model)

        def both(cfg, refs, seed):
            positive, negative = edit_conds(family, refs, lengths=synthetic.family_info(family).prompt_lengths)
            out = synthetic.sample(bcg_model, family, 512, 512, STEPS, cfg, positive, negative, seed=seed)
            eager = synthetic.sample(model, family, 512, 512, STEPS, cfg, positive, negative, seed=seed)  # noqa: F821  (before the `del model` below)
            return out, eager

        sizes = ((512, 512), (768, 512))
        for cfg in (1.0, 2.5):
            for n in (1, 2):
                refs = [
                    synthetic.make_reference_latent(family, w, h, seed=100 + i) for i, (w, h) in enumerate(sizes[:n])
                ]
                out, eager = both(cfg, refs, seed=7)
                assert torch.equal(out, eager), (cfg, n, (out - eager).abs().max().item())
                label = "ref " + "+".join(f"{w}x{h}" for w, h in sizes[:n])
                first = session.last_run["eager"]
                assert first and all(reason.startswith(FIRST) and label in reason for reason in first), session.last_run
        captures = session.runner.stats.captures

        # New reference images of the captured sizes: replayed, no capture, exact to the new values.
        new = [synthetic.make_reference_latent(family, w, h, seed=200 + i) for i, (w, h) in enumerate(sizes)]
        old_eager = both(
            2.5, [synthetic.make_reference_latent(family, w, h, seed=100 + i) for i, (w, h) in enumerate(sizes)], seed=8
        )[1]
        out, eager = both(2.5, new, seed=8)
        assert not torch.equal(eager, old_eager)
        assert torch.equal(out, eager), (out - eager).abs().max().item()
        assert session.last_run["state"] == "replayed" and session.runner.stats.captures == captures, session.last_run

        # A new reference size: a new signature under its label.
        out, eager = both(1.0, [synthetic.make_reference_latent(family, 512, 768, seed=300)], seed=9)
        assert torch.equal(out, eager)
        assert any("ref 512x768" in reason for reason in session.last_run["eager"]), session.last_run
    finally:
        del model
        release_cuda_memory(unload=True)
