"""Issue #10 in real ComfyUI (CPU stand-in here, real graphs on the H200): no graph serves after
what it reads moved, none serves unproven, and every such call runs eager with its reason.

The CPU stand-in replays by address (see ``bcg_runtime/core/cpu_graph.py``), so each stale
replay below would give the old model's numbers here exactly as it would on a GPU. Weights are
moved *and* changed (a reload of other values at new addresses), so a stale replay is visible.
"""

import inspect

import pytest
import torch
from bcg_testing import WARMUP_ONLY, conds, session_of
from test_bcg_nodes import QWEN, models, warmed_qwen  # noqa: F401  (fixtures)

from bench import synthetic

pytestmark = pytest.mark.comfy


def move_all_weights(model, scale=1.25):
    """Every parameter of the DiT to a new tensor with other values (what a reload at new
    addresses with another checkpoint of the family looks like); returns an undo."""
    dm = model.model.diffusion_model
    originals = [(p, p.data) for p in dm.parameters()]
    for p, data in originals:
        p.data = data.clone() * scale

    def undo():
        for p, data in originals:
            p.data = data

    return undo


def sample(model, positive, negative, cfg=1.0):
    return synthetic.sample(model, QWEN, 64, 64, 2, cfg, positive, negative, seed=3)


def test_warmup_rerun_after_weights_moved_captures_again_and_replays_the_new_weights(pack, warmed_qwen):
    _, nodes = pack
    model, warmed, report, positive, negative = warmed_qwen()
    assert "captured," in report
    undo = move_all_weights(model)
    try:
        # The conditioning changed: ComfyUI re-runs the warm-up, which must not say "already captured".
        _, report = nodes["BCGWarmupCapture"].execute(warmed, "64x64", "", "1", positive, negative).args
        assert report.count(": captured,") == 2, report  # cond 40 and uncond 17 tokens, both new
        assert "64x64 txt40 b1: already captured" not in report.split("\n")[1], report
        out = sample(warmed, positive, negative)
        assert torch.equal(out, sample(model, positive, negative))
        assert session_of(warmed).last_run["state"] == "replayed", session_of(warmed).last_run
    finally:
        undo()


def test_an_interrupted_warmup_leaves_no_entry_that_could_replay_after_a_move(pack, models, standin_graphs):
    import comfy.model_management as mm

    from bcg_runtime.comfy import api

    _, nodes = pack
    model = models(QWEN)
    positive, negative = conds(QWEN)
    (bcg_model,) = nodes["BCGApply"].execute(model, "full", 0, capture=WARMUP_ONLY).args

    def cancel_after_first(i, n):
        if i == 1:
            mm.interrupt_current_processing(True)  # what POST /interrupt does

    with pytest.raises(mm.InterruptProcessingException):
        api.warm_up(bcg_model, "64x64", "", "1", positive, negative, progress=cancel_after_first)
    mm.interrupt_current_processing(False)
    session = session_of(bcg_model)
    assert session.runner.entries(), "the first job of the warm-up should have captured"
    assert not session.runner.blocked()  # the cancelled shape is not blocked: the next warm-up retries it
    undo = move_all_weights(model)
    try:
        out = sample(bcg_model, positive, negative, cfg=2.0)
        assert torch.equal(out, sample(model, positive, negative, cfg=2.0))
        run = session.last_run
        assert run["replayed"] == 0, run
        assert any("weights moved" in reason for reason in run["eager"]), run
    finally:
        undo()


def test_a_capture_whose_replay_differs_from_eager_never_serves(pack, models, standin_graphs):
    """A forward that reads Python state per call (here an object-patched forward adding a call
    counter) is frozen by a graph: the proof replay differs, the entry is dropped and blocked, and
    sampling runs eager with the reason ``replay not exact (max abs diff X)``, counted and shown."""
    _, nodes = pack
    model = models(QWEN).clone()
    positive, negative = conds(QWEN)
    calls = {"n": 0}
    proj_out = model.model.diffusion_model.proj_out
    original = proj_out.forward

    def counting(x):
        calls["n"] += 1
        return original(x) + calls["n"]

    model.add_object_patch("diffusion_model.proj_out.forward", counting)
    (bcg_model,) = nodes["BCGApply"].execute(model, "full", 0, capture=WARMUP_ONLY).args
    _, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, negative).args
    assert "not exact: replay not exact (max abs diff" in report, report
    session = session_of(bcg_model)
    assert not session.runner.entries()
    synthetic.sample(bcg_model, QWEN, 64, 64, 2, 1.0, positive, negative, seed=3)
    run = session.last_run
    assert run["replayed"] == 0 and all(r.startswith("replay not exact (max abs diff") for r in run["eager"]), run
    assert any(r.startswith("replay not exact") for r in session.status()["blocked"].values())


@pytest.mark.parametrize("order", ["before BCG Apply", "after BCG Apply"])
def test_a_forward_hook_on_any_submodule_makes_every_call_eager_naming_it(pack, models, standin_graphs, order):
    """Issue 26: code BCG cannot classify (a forward hook) never meets a graph: the warm-up says
    why it captured nothing, sampling runs eager naming the module, and the output equals eager
    with the hook, in either order; with the hook removed the same session captures and replays."""
    _, nodes = pack
    model = models(QWEN).clone()
    positive, negative = conds(QWEN)
    block = model.model.diffusion_model.transformer_blocks[0]
    reference_without = sample(model, positive, negative, cfg=2.0)
    apply = lambda m: nodes["BCGApply"].execute(m, "auto", 0).args[0]  # noqa: E731
    bcg_model = apply(model) if order == "after BCG Apply" else None
    handle = block.register_forward_hook(lambda module, args, output: output)
    try:
        reference = sample(model, positive, negative, cfg=2.0)
        bcg_model = bcg_model or apply(model)
        for _ in range(2):
            assert torch.equal(sample(bcg_model, positive, negative, cfg=2.0), reference)
            run = session_of(bcg_model).last_run
            assert run["replayed"] == 0 and run["calls"] >= 2, run
            assert all("forward hook on diffusion_model.transformer_blocks.0" in r for r in run["eager"]), run
    finally:
        handle.remove()
    sample(bcg_model, positive, negative, cfg=2.0)
    assert torch.equal(sample(bcg_model, positive, negative, cfg=2.0), reference_without)
    assert session_of(bcg_model).last_run["state"] == "replayed", session_of(bcg_model).last_run


@pytest.mark.smoke
def test_an_object_patch_on_the_dit_is_never_replayed_through(pack, warmed_qwen):
    """NegPiP-style: a clone that object-patches a DiT method keeps weights in place; the graph
    captured without the patch must not serve it."""
    model, warmed, _, positive, negative = warmed_qwen("full")
    proj_out = model.model.diffusion_model.proj_out
    original = proj_out.forward
    doubled = lambda x: original(x) * 2  # noqa: E731

    patched = warmed.clone()
    patched.add_object_patch("diffusion_model.proj_out.forward", doubled)
    reference = model.clone()
    reference.add_object_patch("diffusion_model.proj_out.forward", doubled)
    out = sample(patched, positive, negative)
    assert torch.equal(out, sample(reference, positive, negative))
    assert not torch.equal(out, sample(model, positive, negative))
    run = session_of(patched).last_run
    assert run["replayed"] == 0 and any("object patches changed" in r for r in run["eager"]), run


def test_an_attention_function_swapped_after_warmup_is_never_replayed_through(pack, warmed_qwen, monkeypatch):
    """Qwen-Image binds ``optimized_attention_masked`` in its own module; a node that swaps it
    (attention-patch packs do) changes kernels the graph froze."""
    import comfy.ldm.qwen_image.model as qwen

    model, warmed, _, positive, negative = warmed_qwen("full")
    original = qwen.optimized_attention_masked
    monkeypatch.setattr(qwen, "optimized_attention_masked", lambda *a, **k: original(*a, **k) * 0.5)
    out = sample(warmed, positive, negative)
    assert torch.equal(out, sample(model, positive, negative))
    run = session_of(warmed).last_run
    assert run["replayed"] == 0 and any("attention function swapped" in r for r in run["eager"]), run


def test_an_attention_function_swapped_for_some_steps_within_a_run_is_never_replayed_through(pack, warmed_qwen):
    """A model wrapper that swaps the attention kernel for some steps only (inside the run, where
    the run's fingerprint was already taken): the per-call token sees the swap, the graph captured
    under the other kernel is not replayed for those steps, and the output equals eager's with the
    same wrapper."""
    import comfy.ldm.qwen_image.model as qwen

    model, warmed, _, positive, negative = warmed_qwen("full")
    original = qwen.optimized_attention_masked

    def swapping_every_second_call():
        calls = []

        def wrapper(apply_model, args):
            calls.append(None)
            qwen.optimized_attention_masked = _halved(original) if len(calls) % 2 == 0 else original
            try:
                return apply_model(args["input"], args["timestep"], **args["c"])
            finally:
                qwen.optimized_attention_masked = original

        return wrapper

    swapped, plain = warmed.clone(), model.clone()
    swapped.set_model_unet_function_wrapper(swapping_every_second_call())
    plain.set_model_unet_function_wrapper(swapping_every_second_call())
    out = sample(swapped, positive, negative)
    assert torch.equal(out, sample(plain, positive, negative))
    run = session_of(swapped).last_run
    assert run["replayed"] == 1 and run["calls"] == 2, run  # the first step replays, the swapped second does not


def _halved(fn):
    return lambda *a, **k: fn(*a, **k) * 0.5


def _rebind_module_function(monkeypatch):
    import comfy.ldm.qwen_image.model as qwen

    monkeypatch.setattr(qwen, "apply_rope1", _halved(qwen.apply_rope1))
    return "comfy.ldm.qwen_image.model.apply_rope1"


def _patch_class_method(monkeypatch):
    import comfy.ldm.qwen_image.model as qwen

    monkeypatch.setattr(qwen.GELU, "forward", _halved(qwen.GELU.forward))
    return "comfy.ldm.qwen_image.model.GELU.forward"


def _rebind_torch_function(monkeypatch):
    monkeypatch.setattr(torch.nn.functional, "gelu", _halved(torch.nn.functional.gelu))
    return "torch.nn.functional.gelu"


@pytest.mark.parametrize("rebind", [_rebind_module_function, _patch_class_method, _rebind_torch_function],
                         ids=lambda f: f.__name__[1:])  # fmt: skip
def test_code_rebound_after_warmup_is_never_replayed_through_and_named(pack, warmed_qwen, monkeypatch, rebind):
    """A node that rebinds what the forward calls by name (a ComfyUI module's function, a method
    on a DiT class, a torch function) changes eager and not the graph: the fingerprint's code
    state drops the graphs, names what was rebound, and every call runs eager."""
    model, warmed, _, positive, negative = warmed_qwen("full")
    name = rebind(monkeypatch)
    out = sample(warmed, positive, negative)
    assert torch.equal(out, sample(model, positive, negative))
    run = session_of(warmed).last_run
    assert run["replayed"] == 0 and any(f"ComfyUI code rebound ({name})" in r for r in run["eager"]), run


def test_torch_compile_model_after_bcg_makes_bcg_step_aside_with_the_backend(pack, warmed_qwen):
    """Core's TorchCompileModel on the BCG model: BCG never captures or replays dynamo's forward;
    every call runs the compiled model, eager to BCG, with the backend named."""
    from comfy_api.torch_helpers import set_torch_compile_wrapper

    model, warmed, _, positive, negative = warmed_qwen("full")
    compiled = warmed.clone()
    set_torch_compile_wrapper(compiled, backend="eager")  # "cudagraphs"/"inductor" need a GPU; the guard is the same
    out = sample(compiled, positive, negative)
    assert torch.equal(out, sample(model, positive, negative))
    run = session_of(compiled).last_run
    assert run["replayed"] == 0 and list(run["eager"]) == [
        "disabled: TorchCompileModel (backend eager) compiles this model: BCG steps aside and the compiled model runs as it would "
        "without BCG (for compiled kernels under graphs, use BCG Apply mode 'fast' without TorchCompileModel)"
    ], run
    # Without the compile wrapper the same session replays again.
    sample(warmed, positive, negative)
    assert session_of(warmed).last_run["state"] == "replayed", session_of(warmed).last_run


def test_torch_compile_model_with_bcg_compiles_exactly_what_it_compiles_alone(pack, warmed_qwen):
    """BCG's DIFFUSION_MODEL hook sits inside the forward TorchCompileModel compiles, so dynamo
    traces it with the DiT: BCG must add no graph and no recompile (on the H200 it once made dynamo
    compile FLUX.1 twice and sample 1.34x slower than the compile alone), give the same output and
    still count every call with the reason."""
    from comfy_api.torch_helpers import set_torch_compile_wrapper

    model, warmed, _, positive, negative = warmed_qwen("full")
    graphs = []

    def counting_backend(gm, example_inputs):
        graphs.append(gm.code)
        return gm.forward

    def two_runs(m):
        torch._dynamo.reset()
        graphs.clear()
        breaks = torch._dynamo.utils.counters["graph_break"]
        breaks.clear()
        compiled = m.clone()
        set_torch_compile_wrapper(compiled, backend=counting_backend)
        out = sample(compiled, positive, negative, cfg=2.0)  # cond and uncond: 40 and 17 tokens
        first = list(graphs)
        assert torch.equal(sample(compiled, positive, negative, cfg=2.0), out)
        return out, first, list(graphs), dict(breaks), compiled

    alone, alone_first, alone_both, alone_breaks, _ = two_runs(model)
    with_bcg, bcg_first, bcg_both, bcg_breaks, compiled = two_runs(warmed)
    assert alone_first and alone_both == alone_first, "the compile alone recompiled on its second run"
    assert bcg_first == alone_first and bcg_both == alone_both, (len(alone_both), len(bcg_both))
    # Graph breaks by reason (how often a reason repeats follows ComfyUI's own CPU-side calls).
    assert set(bcg_breaks) == set(alone_breaks), set(bcg_breaks) ^ set(alone_breaks)
    assert torch.equal(with_bcg, alone)
    run = session_of(compiled).last_run
    reason = "disabled: TorchCompileModel (backend counting_backend) compiles this model: BCG steps aside"
    assert run["replayed"] == 0 and run["calls"] == 4 and all(r.startswith(reason) for r in run["eager"]), run


def test_a_dit_another_node_compiled_makes_bcg_step_aside_and_count_each_call(pack, warmed_qwen):
    """A compile node that replaces the DiT with a torch.compile'd module (an object patch, not
    TorchCompileModel): BCG steps aside for it too, counts every call with the reason, and a
    warm-up says so at once."""
    _, nodes = pack
    model, warmed, _, positive, negative = warmed_qwen("full")
    compiled = warmed.clone()
    compiled.add_object_patch("diffusion_model", torch.compile(model.model.diffusion_model, backend="eager"))
    torch._dynamo.reset()
    out = sample(compiled, positive, negative, cfg=2.0)
    assert torch.equal(out, sample(model, positive, negative, cfg=2.0))
    run = session_of(compiled).last_run
    reason = "the diffusion model is a torch.compile'd module (another node compiled it): BCG steps aside"
    assert (
        run["replayed"] == 0 and run["calls"] == 4 and all(r.startswith(f"disabled: {reason}") for r in run["eager"])
    ), run
    captures = session_of(compiled).runner.stats.captures
    _, report = nodes["BCGWarmupCapture"].execute(compiled, "64x64", "", "1", positive, negative).args
    assert report.splitlines()[-1].startswith(f"off: {reason}"), report
    assert session_of(compiled).runner.stats.captures == captures


def test_a_warmup_after_torch_compile_model_says_bcg_steps_aside_and_samples_nothing(
    pack, models, standin_graphs, monkeypatch
):
    """TorchCompileModel before BCG Apply: a warm-up would only compile dynamo's graphs for shapes
    no BCG graph will serve, so it stops at once with the reason; sampling then runs the compiled
    model, eager to BCG, with the same reason."""
    from comfy_api.torch_helpers import set_torch_compile_wrapper

    _, nodes = pack
    model = models(QWEN)
    positive, negative = conds(QWEN)
    compiled = model.clone()
    set_torch_compile_wrapper(compiled, backend="eager")
    (bcg_model,) = nodes["BCGApply"].execute(compiled, "full", capture=WARMUP_ONLY).args
    from bcg_runtime.comfy import warmup

    def no_sampling(*args, **kwargs):
        raise AssertionError("the warm-up sampled a model BCG steps aside for")

    with monkeypatch.context() as patch:
        patch.setattr(warmup.sampling, "sample", no_sampling)
        warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, negative).args
    reason = "TorchCompileModel (backend eager) compiles this model: BCG steps aside"
    assert report.splitlines()[-1].startswith(f"off: {reason}"), report
    assert session_of(warmed).runner.stats.captures == 0
    assert torch.equal(sample(warmed, positive, negative), sample(model, positive, negative))
    run = session_of(warmed).last_run
    assert run["replayed"] == 0 and all(r.startswith(f"disabled: {reason}") for r in run["eager"]), run


def test_an_error_in_bcgs_decision_runs_the_call_eager_and_names_it(pack, models, standin_graphs, monkeypatch):
    """A prompt that runs without BCG runs with it: an adapter (or any part of the decision) that
    raises on a call the pack did not foresee (MiniMax H3's step memo once raised on every
    inference-mode timestep) makes that call eager, with the error in its reason, not a failed prompt."""
    _, nodes = pack
    model = models(QWEN)
    positive, negative = conds(QWEN)
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)

    def broken_call_key(self, call):
        raise RuntimeError("Inference tensors do not track version counter.")

    monkeypatch.setattr(type(session.adapter), "call_key", broken_call_key)  # adapters are frozen
    with torch.inference_mode():
        out = sample(bcg_model, positive, negative, cfg=2.5)
        assert torch.equal(out, sample(model, positive, negative, cfg=2.5))
    run = session.last_run
    assert run["replayed"] == 0 and run["calls"] > 0, run
    (reason,) = run["eager"]
    assert reason.startswith("BCG could not decide on this call (RuntimeError: Inference tensors"), reason


def test_a_forward_that_reads_a_bookkeeping_entry_is_never_captured_and_names_it(pack, models, standin_graphs):
    """BCG leaves ``cond_or_uncond``, ``sigmas``, ``sample_sigmas`` ... out of the key because the
    forwards it serves hand them only to patches. A forward that reads one itself, here Qwen-Image's
    with SeedVR2's move (0.33.0 comfy/ldm/seedvr/model.py:1299-1361: the batch's halves swapped by
    ``cond_or_uncond``), would have its captured branch replayed for any order. The watch on the
    capture's plain run fails that capture by the entry's name; sampling runs eager with that
    reason and equals the same model without BCG."""
    _, nodes = pack
    model = models(QWEN).clone()
    positive, negative = conds(QWEN)
    forward = model.model.diffusion_model._forward
    signature = inspect.signature(forward)

    def swaps_halves_by_order(*args, **kwargs):
        out = forward(*args, **kwargs)
        order = (signature.bind(*args, **kwargs).arguments.get("transformer_options") or {}).get("cond_or_uncond")
        return torch.cat(out.chunk(2)[::-1]) if order and len(order) == 2 else out

    model.add_object_patch("diffusion_model._forward", swaps_halves_by_order)
    (bcg_model,) = nodes["BCGApply"].execute(model, "full", 0, capture=WARMUP_ONLY).args
    _, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, negative).args
    named = "the forward reads transformer_options['cond_or_uncond'], which BCG leaves out of the key"
    assert report.count(named) == 2 and ": captured," not in report, report  # cond and uncond, both refused
    session = session_of(bcg_model)
    assert not session.runner.entries()
    out = synthetic.sample(bcg_model, QWEN, 64, 64, 2, 2.0, positive, negative, seed=3)
    assert torch.equal(out, synthetic.sample(model, QWEN, 64, 64, 2, 2.0, positive, negative, seed=3))
    run = session.last_run
    assert run["replayed"] == 0 and run["eager"] and all(named in r for r in run["eager"]), run
