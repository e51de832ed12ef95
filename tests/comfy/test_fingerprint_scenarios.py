"""Issue 26's scenarios in real ComfyUI (CPU stand-in here, real graphs on the H200): each way of
changing the math that the earlier guards did not list either replays a graph captured under
that very state or runs eager with a reason naming it, and every output equals the same workflow
without BCG.

The CPU stand-in replays by address (``bcg_runtime/core/cpu_graph.py``), so a graph that ignored a
bypass LoRA or replayed a stale sigma would give the wrong numbers here exactly as on a GPU.
"""

import threading

import pytest
import torch
from bcg_testing import WARMUP_ONLY, conds, session_of
from test_bcg_nodes import QWEN, models  # noqa: F401  (fixture)

from bench import synthetic

pytestmark = pytest.mark.comfy


def sample(model, positive, negative, cfg=2.0, seed=3):
    return synthetic.sample(model, QWEN, 64, 64, 2, cfg, positive, negative, seed=seed)


def apply(nodes, model, mode="auto"):
    return nodes["BCGApply"].execute(model, mode, 0).args[0]


def random_lora(model, blocks=("transformer_blocks.0",)):
    """A rank-4 LoRA on every 2-D weight of the given blocks, in ComfyUI's LoRA key format."""
    dm = model.model.diffusion_model
    g = torch.Generator().manual_seed(0)
    lora = {}
    for name, p in dm.named_parameters():
        if name.endswith(".weight") and p.dim() == 2 and any(name.startswith(b + ".") for b in blocks):
            out_features, in_features = p.shape
            base = f"diffusion_model.{name[: -len('.weight')]}"
            lora[f"{base}.lora_up.weight"] = torch.randn(out_features, 4, generator=g) * 0.2
            lora[f"{base}.lora_down.weight"] = torch.randn(4, in_features, generator=g) * 0.2
    return lora


def bypass(model, lora, strength):
    import comfy.sd

    if not hasattr(comfy.sd, "load_bypass_lora_for_models"):
        pytest.skip("this ComfyUI has no bypass LoRA (Load LoRA (Bypass) came after 0.8.0)")
    return comfy.sd.load_bypass_lora_for_models(model, None, lora, strength, 0)[0]


def test_bypass_lora_after_bcg_apply_and_its_strength_change_never_replay_the_graph_without_it(
    pack, models, standin_graphs
):
    """Issue 26 (1): Load LoRA (Bypass) replaces each layer's forward and leaves the weights where
    they are. After BCG Apply, each strength is its own fingerprint: captured, proven and replayed
    with that LoRA, never the graph captured without it; every output equals eager."""
    _, nodes = pack
    model = models(QWEN)
    positive, negative = conds(QWEN)
    lora = random_lora(model)
    bcg_model = apply(nodes, model)
    plain = sample(bcg_model, positive, negative)  # captures the no-LoRA graphs on first call
    assert torch.equal(plain, sample(model, positive, negative))
    for strength in (1.0, 0.5):
        reference = sample(bypass(model, lora, strength), positive, negative)
        assert not torch.equal(reference, plain)  # so a replay that ignored the LoRA could not pass
        with_lora = bypass(bcg_model, lora, strength)
        for _ in range(2):
            assert torch.equal(sample(with_lora, positive, negative), reference), strength
        run = session_of(with_lora).last_run
        assert run["state"] == "replayed", run  # the second run replays the graphs captured with the LoRA
    assert torch.equal(sample(bcg_model, positive, negative), plain)  # LoRA gone again: exact


def test_bypass_lora_before_bcg_apply_is_in_the_captured_graph(pack, models, standin_graphs):
    _, nodes = pack
    model = models(QWEN)
    positive, negative = conds(QWEN)
    with_lora = bypass(model, random_lora(model), 0.8)
    reference = sample(with_lora, positive, negative)
    bcg_model = apply(nodes, with_lora)
    for _ in range(2):
        assert torch.equal(sample(bcg_model, positive, negative), reference)
    assert session_of(bcg_model).last_run["state"] == "replayed", session_of(bcg_model).last_run
    assert not torch.equal(sample(model, positive, negative), reference)  # the base model kept no LoRA


def test_a_sigma_dependent_attention_override_before_bcg_apply_sees_each_steps_sigma(pack, models, standin_graphs):
    """Issue 26 (2): mode breakable chains an override installed before BCG Apply; each replayed
    break must get the live call's transformer_options (this step's sigma), not the capture's."""
    _, nodes = pack
    model = models(QWEN).clone()
    positive, negative = conds(QWEN)

    def sigma_scaled_attention(func, *args, **kwargs):
        sigma = kwargs["transformer_options"]["sigmas"]
        return func(*args, **kwargs) * (1 + sigma.max().to(args[0].dtype))

    model.model_options.setdefault("transformer_options", {})["optimized_attention_override"] = sigma_scaled_attention
    bcg_model = apply(nodes, model, "breakable")
    for seed in (3, 4):
        reference = sample(model, positive, negative, seed=seed)
        assert torch.equal(sample(bcg_model, positive, negative, seed=seed), reference)
    run = session_of(bcg_model).last_run
    assert run["state"] == "replayed", run


def test_a_dit_call_from_another_thread_runs_eager_with_the_reason(pack, models, standin_graphs):
    """Issue 26 (7): ComfyUI 0.33's multi-GPU CFG split calls the DiT from one thread per device;
    a call from another thread than the run's is outside the fingerprint: eager, named."""
    import comfy.patcher_extension as pe

    _, nodes = pack
    model = models(QWEN)
    positive, negative = conds(QWEN)
    reference = sample(model, positive, negative)

    def in_another_thread(executor, *args, **kwargs):
        out = {}
        worker = threading.Thread(target=lambda: out.setdefault("x", executor(*args, **kwargs)))
        worker.start()
        worker.join()
        return out["x"]

    bcg_model = apply(nodes, model)
    bcg_model.add_wrapper_with_key(pe.WrappersMP.APPLY_MODEL, "test_threads", in_another_thread)
    for _ in range(2):
        assert torch.equal(sample(bcg_model, positive, negative), reference)
    run = session_of(bcg_model).last_run
    assert run["replayed"] == 0 and all(r.startswith("multi-GPU split") for r in run["eager"]), run


def test_an_unknown_model_options_entry_makes_the_run_eager_naming_it(pack, models, standin_graphs):
    _, nodes = pack
    model = models(QWEN).clone()
    positive, negative = conds(QWEN)
    model.model_options["some_pack_setting"] = 0.5
    bcg_model = apply(nodes, model)
    sample(bcg_model, positive, negative)
    run = session_of(bcg_model).last_run
    assert run["replayed"] == 0 and all("unknown model_options entry 'some_pack_setting'" in r for r in run["eager"]), (
        run
    )


def _flip_bf16_reduced_precision_reduction():
    matmul = torch.backends.cuda.matmul
    before = matmul.allow_bf16_reduced_precision_reduction
    matmul.allow_bf16_reduced_precision_reduction = not before
    return lambda: setattr(matmul, "allow_bf16_reduced_precision_reduction", before)


def _reverse_kitchen_order():
    import comfy_kitchen

    registry = comfy_kitchen.registry
    before = list(registry._priority)
    registry.set_priority(before[::-1])
    return lambda: registry.set_priority(before)


def _flip_in_training():
    import comfy.model_management as mm

    if not hasattr(mm, "in_training"):
        pytest.skip("this ComfyUI has no in_training flag (it came after 0.8.0)")
    before = mm.in_training
    mm.in_training = not before
    return lambda: setattr(mm, "in_training", before)


def _cudnn_first_in_comfy_sdpa_list():
    import comfy.ops

    missing = object()
    before = getattr(comfy.ops, "SDPA_BACKEND_PRIORITY", missing)
    from torch.nn.attention import SDPBackend

    # ComfyUI's list (made only where CUDA is) holds SDPBackend values, which its attention hands
    # to sdpa_kernel(set_priority=True); names there fail every CUDA forward
    comfy.ops.SDPA_BACKEND_PRIORITY = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION]
    return lambda: (
        delattr(comfy.ops, "SDPA_BACKEND_PRIORITY")
        if before is missing
        else setattr(comfy.ops, "SDPA_BACKEND_PRIORITY", before)
    )


@pytest.mark.parametrize(
    "change, part",
    [
        (_flip_bf16_reduced_precision_reduction, "torch math flags"),
        (_reverse_kitchen_order, "kernel settings"),
        (_flip_in_training, "kernel settings"),
        (_cudnn_first_in_comfy_sdpa_list, "kernel settings"),
    ],
    ids=lambda v: v.__name__[1:] if callable(v) else "",
)
def test_a_process_setting_that_picks_kernels_changed_between_runs_drops_the_graphs(
    pack, models, standin_graphs, change, part
):
    """A replay keeps the kernels and the path chosen at capture; eager reads torch's math flags
    (TF32, reduced-precision reductions) and the settings outside them (comfy-kitchen's backend
    order, ComfyUI's training flag, its SDPA backend list) at every call: a change is a
    fingerprint change, named in the reason, and the next run captures again under it."""
    from bcg_runtime.comfy.fingerprint import CHANGES, take

    _, nodes = pack
    model = models(QWEN)
    positive, negative = conds(QWEN)
    bcg_model = apply(nodes, model)
    sample(bcg_model, positive, negative)
    sample(bcg_model, positive, negative)
    session = session_of(bcg_model)
    assert session.last_run["state"] == "replayed"
    before = take(bcg_model)
    undo = change()
    try:
        changed = take(bcg_model)
        assert [n for n in changed.parts if changed.parts[n] != before.parts[n]] == [part]
        assert changed.change_from(before) == CHANGES.get(part, f"{part} changed")
        captures = session.runner.stats.captures
        sample(bcg_model, positive, negative)
        run = session.last_run
        # step 1's cond and uncond are captured again under the new setting, step 2 replays them
        assert session.runner.stats.captures == captures + 2, run
        assert sum(n for r, n in run["eager"].items() if r.startswith("first call, captured")) == 2, run
    finally:
        undo()
    assert take(bcg_model) == before


def test_the_sdpa_order_torch_settles_in_the_warmups_first_attention_binds_its_graphs(
    pack, models, standin_graphs, monkeypatch
):
    """torch settles its SDPA backend order at a process's first attention call (cuDNN's attention
    first on Hopper, where that call is not inside ComfyUI's own ``set_priority``). On a server
    whose first attention is the warm-up's (a workflow whose conditioning comes from a file), the
    order changes inside the first capture: the capture and its proof ran under the settled order,
    so the graphs are bound to it and the sampling run replays them. Bound to the order taken
    before the capture, 'warm-up only' ran every call eager until the next warm-up (the e2e plain
    start on the H100, 2026-12-06)."""
    from bcg_runtime.comfy.kernel_settings import kernel_settings

    _, nodes = pack
    model = models(QWEN)
    positive, negative = conds(QWEN)
    before = list(torch._C._get_sdp_priority_order())
    settled = [3, 1, 2, 0, 4]  # cuDNN, flash, efficient, math, overrideable: torch 2.11 on an H100/H200
    import comfy.ldm.qwen_image.model as qwen

    # The model's attention settles the order at its first call, as torch's SDPA does on a GPU
    # (ComfyUI on the CPU attends without SDPA). A GPU process has settled it already, so the test
    # starts from another order; the eager twin runs under the settled one, as the sampling run does.
    attention = qwen.optimized_attention_masked
    unsettled = [True]

    def first_call_settles_the_order(*args, **kwargs):
        if unsettled:
            unsettled.clear()
            torch._C._set_sdp_priority_order(settled)
        return attention(*args, **kwargs)

    try:
        torch._C._set_sdp_priority_order(settled)
        eager = sample(model, positive, negative)
        torch._C._set_sdp_priority_order([1, 2, 0, 3, 4])  # flash first: torch's order before it settles
        monkeypatch.setattr(qwen, "optimized_attention_masked", first_call_settles_the_order)
        (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
        warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, negative).args
        session = session_of(warmed)
        assert not unsettled and session.runner.stats.captures == 2, report
        assert session.last_state.parts["kernel settings"] == kernel_settings()
        out = sample(warmed, positive, negative)
        run = session.last_run
        assert run["state"] == "replayed" and run["replayed"] == run["calls"] > 0, run
        assert torch.equal(out, eager)
    finally:
        torch._C._set_sdp_priority_order(before)


def test_bypass_lora_follows_the_model_into_a_copy_rebuilt_from_its_loader(pack, tmp_path):
    """Issue 26 (1), Dynamic VRAM: BCG samples with a twin ComfyUI rebuilds from the loader's
    recipe, a new module tree, while ``clone`` copies the bypass LoRA's injection still bound to
    the original's layers. ``clone(force_deepcopy=True)`` takes the very rebuild path of
    ``get_non_dynamic_delegate`` on this host (no Dynamic VRAM on a CPU): without remaking the
    injection the copy samples without the LoRA and the original, sampled after it, with it."""
    import comfy.sd
    from safetensors.torch import save_file

    if not hasattr(comfy.sd, "load_bypass_lora_for_models"):
        pytest.skip("this ComfyUI has no bypass LoRA and no Dynamic VRAM twin (both came after 0.8.0)")
    from bcg_runtime.comfy import twin as twin_module

    path = tmp_path / "qwen_depth1.safetensors"
    save_file({k: v.contiguous() for k, v in synthetic.build_state_dict(QWEN, depth=1).items()}, str(path))
    model = comfy.sd.load_diffusion_model(str(path))
    assert model.cached_patcher_init is not None  # the loader's recipe, which the twin is rebuilt from
    positive, negative = conds(QWEN)
    plain = sample(model, positive, negative)
    with_lora = bypass(model, random_lora(model), 0.8)
    reference = sample(with_lora, positive, negative)
    assert not torch.equal(reference, plain)

    twin = with_lora.clone(force_deepcopy=True)
    assert twin.model is not with_lora.model and "bypass_lora" in twin.injections
    assert twin_module.remake_injections(twin, with_lora) is None
    assert torch.equal(sample(twin, positive, negative), reference)  # the copy has the LoRA
    assert torch.equal(sample(model, positive, negative), plain)  # and the original does not


def test_an_injection_bcg_cannot_remake_refuses_the_copy_naming_it(pack, tmp_path):
    import comfy.patcher_extension

    from bcg_runtime.comfy import twin as twin_module

    class Original:
        model = object()

    class Twin:
        model = object()
        injections = {
            "my_pack_hooks": [comfy.patcher_extension.PatcherInjection(inject=lambda mp: None, eject=lambda mp: None)]
        }

    refusal = twin_module.remake_injections(Twin(), Original())
    assert refusal is not None and "'my_pack_hooks'" in refusal and "--disable-dynamic-vram" in refusal


def test_a_run_that_can_replay_nothing_walks_no_fingerprint(pack, models, standin_graphs, monkeypatch):
    """Issue 30: the fingerprint is taken at the first DiT call that needs it. Under 'warm-up only'
    with nothing captured every call runs eager ('not captured') and the run walks nothing; after a
    warm-up, a run takes it once and replays; a size the warm-up did not take walks nothing again.
    Every output equals eager."""
    from bcg_testing import WARMUP_ONLY

    from bcg_runtime.comfy import fingerprint

    _, nodes = pack
    model = models(QWEN)
    positive, negative = conds(QWEN)
    walks = []
    take = fingerprint.take
    monkeypatch.setattr(fingerprint, "take", lambda *a, **k: walks.append(1) or take(*a, **k))
    eager = sample(model, positive, negative)
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    assert torch.equal(sample(bcg_model, positive, negative), eager)
    assert walks == [] and session_of(bcg_model).last_run["replayed"] == 0, session_of(bcg_model).last_run
    warmed, _ = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "2", positive, negative).args
    walks.clear()
    assert torch.equal(sample(warmed, positive, negative), eager)
    run = session_of(warmed).last_run
    assert len(walks) == 1 and run["replayed"] == run["calls"] > 0, (walks, run)
    walks.clear()
    wider = synthetic.sample(model, QWEN, 96, 64, 2, 2.0, positive, negative, seed=3)
    assert torch.equal(synthetic.sample(warmed, QWEN, 96, 64, 2, 2.0, positive, negative, seed=3), wider)
    run = session_of(warmed).last_run
    assert walks == [] and run["replayed"] == 0 and run["calls"] > 0, run
