"""Helpers shared by the comfy-layer tests (fixtures live in conftest.py)."""

import contextlib
import gc
import importlib
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: Module name the tests load the pack under, as ComfyUI's loader would under its folder name.
PACK = "comfyui_bcg_pack"
#: BCG Apply's capture policy for tests of warm-up semantics (unwarmed shapes run eager).
WARMUP_ONLY = "warm-up only"


def comfyui_root() -> pathlib.Path:
    """The host's tree, from where its ``comfy.model_management`` was imported (``comfy`` itself
    is a namespace package in some versions: no ``__init__``)."""
    try:
        management = importlib.import_module("comfy.model_management")
    except ImportError:
        pytest.skip("ComfyUI is not importable (comfy layer): set COMFYUI_PATH")
    return pathlib.Path(management.__file__).parent.parent


def conds(family):
    from bench import synthetic

    pos_len, neg_len = synthetic.family_info(family).prompt_lengths
    return synthetic.make_conditioning(family, pos_len, seed=1), synthetic.make_conditioning(family, neg_len, seed=2)


def sample_both(family, bcg_model, model, *args, **kwargs):
    """(BCG output, eager output) of the same ``synthetic.sample`` call."""
    from bench import synthetic

    return synthetic.sample(bcg_model, family, *args, **kwargs), synthetic.sample(model, family, *args, **kwargs)


def session_of(model):
    """The BCG session the pack attached to a ModelPatcher."""
    from bcg_runtime.comfy.hooks import session_of

    return session_of(model)


def sample_custom_advanced(model, family, width, height, steps, cfg, positive, negative, seed):
    """Sample the way SamplerCustomAdvanced does: a CFGGuider's ``sample`` with explicit sigmas."""
    import comfy.sample
    import comfy.samplers

    from bench import synthetic

    latent = comfy.sample.fix_empty_latent_channels(model, synthetic.empty_latent(family, width, height))
    noise = comfy.sample.prepare_noise(latent, seed)
    guider = comfy.samplers.CFGGuider(model)
    guider.set_conds(positive, negative)
    guider.set_cfg(cfg)
    sigmas = comfy.samplers.calculate_sigmas(model.get_model_object("model_sampling"), "simple", steps)
    sampler = comfy.samplers.sampler_object("euler")
    return guider.sample(noise, latent, sampler, sigmas, disable_pbar=True, seed=seed)


def release_cuda_memory(unload: bool = False) -> int:
    """Return everything unreferenced to the device (after unloading every model when ``unload``);
    the reserved bytes left."""
    import comfy.model_management as mm
    import torch

    if unload:
        mm.unload_all_models()
    mm.cleanup_models_gc()
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return torch.cuda.memory_reserved()


@contextlib.contextmanager
def first_weight_moved(model, scale=1.5):
    """The DiT's first parameter replaced by a new tensor (new address, other values) for the
    block: what a reload or a non-in-place patch does to one weight."""
    import comfy.utils

    dm = model.model.diffusion_model
    name, param = next(iter(dm.named_parameters()))
    original = param.data
    comfy.utils.set_attr_param(dm, name, original.clone() * scale)
    try:
        yield
    finally:
        comfy.utils.set_attr_param(dm, name, original)


def gpu_families(environ=None) -> list[str]:
    """The families a family-parametrised GPU test runs: ``BCG_GPU_FAMILIES`` (names, space
    separated) or every recipe, then ``BCG_GPU_FAMILY_PART=k/n``: every n-th of them from the k-th,
    so n lanes of the GPU suite (``TEST_LANES``) share one file's families without listing them."""
    import os

    from bench import synthetic

    environ = os.environ if environ is None else environ
    families = environ.get("BCG_GPU_FAMILIES", "").split() or list(synthetic.FAMILIES)
    part = environ.get("BCG_GPU_FAMILY_PART", "")
    if not part:
        return families
    k, _, n = part.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise ValueError(f"BCG_GPU_FAMILY_PART={part!r}: give k/n with 1 <= k <= n (e.g. 2/3)")
    return families[int(k) - 1 :: int(n)]


def skip_unless_host_builds(family):
    """Skip when this ComfyUI's detection builds ``family``'s test model (at the recipe's
    ``smallest_depth``) otherwise than its recipe says (read from the layout, the released one
    where the recipe has ``checkpoint_layout``, on the meta device, before any weight is made),
    naming the keys and,
    where known, why (:data:`HOST_DETECTION_LIMITS`)."""
    import torch

    import comfy.supported_models

    from bench import synthetic
    from bench.recipe import config_differences

    info = synthetic.family_info(family)
    if not hasattr(comfy.supported_models, info.supported_model):
        pytest.skip(f"this ComfyUI has no supported_models.{info.supported_model} (the {family} recipe's class)")
    depth = info.smallest_depth
    try:
        shapes = synthetic.state_dict_shapes(family, depth=depth)
    except TypeError as error:  # an older model class without a parameter the recipe's (later) config sets
        pytest.skip(f"this ComfyUI's {family} model class does not take the recipe's config: {error}")
    except (ImportError, AttributeError) as error:  # a family newer than this ComfyUI (0.8.0 has no Ideogram 4)
        pytest.skip(f"this ComfyUI has no {synthetic.family_info(family).ldm_class}: {error}")
    absent = [
        attr
        for attr, count in zip(info.block_attrs, info.depth_counts(depth))
        if count and not any(key.startswith(attr + ".") for key in shapes)
    ]
    if absent:  # 0.8.0's LTXAVModel has no video_embeddings_connector: a later ComfyUI's block path
        pytest.skip(f"this ComfyUI's {info.ldm_class} has no {', '.join(absent)} (the {family} recipe's blocks)")
    sd = {k: torch.empty(shape, device="meta") for k, shape in shapes.items()}
    if info.checkpoint_layout is not None:  # the released file's keys, which detection reads
        sd = info.checkpoint_layout(info, sd)
    _, detected = synthetic.detected_config(family, sd, depth=depth)
    want = synthetic.unet_config(family, depth=depth)
    diff = config_differences(
        synthetic.family_info(family), want, detected or {}, set(want) - synthetic.DETECTED_FROM_VALUES
    )
    if diff:
        why = HOST_DETECTION_LIMITS.get(family, "")
        pytest.skip(
            f"this ComfyUI detects the {family} test model otherwise (recipe, detected): {diff}{'; ' + why if why else ''}"
        )


#: Why a host's detection builds a family's test model otherwise, where known.
HOST_DETECTION_LIMITS = {
    "flux2": "ComfyUI 0.8.0 gives every FLUX.2 48 heads (FLUX.2 dev's); a klein-shaped model (hidden 3072, "
    "24 heads of 128) needs the later detection (num_heads = hidden / 128), which 0.33.0 has; the flux2_dev "
    "recipe (FLUX.2 dev's shape) covers FLUX.2 there",
}


def check_gpu_verification_state(nodes, model, family, monkeypatch, sample=None):
    """BCG Apply without ``BCG_UNVERIFIED_FAMILIES`` (removed here): a family whose adapter says
    ``gpu_verified`` is served (the first call captured, the next replayed; a ``keys_per_step``
    family's schedule replayed on its third run), any other runs
    unchanged with the reason and the opt-in. ``sample(model)`` samples 2 steps at cfg > 1; by
    default 64x64 px (5 frames for a video family) with the family's test prompts. BCG's output
    equals eager's either way."""
    import torch

    from bench import synthetic
    from bcg_runtime.comfy.models import by_family

    monkeypatch.delenv("BCG_UNVERIFIED_FAMILIES")
    if sample is None:
        positive, negative = conds(family)
        frames = 5 if synthetic.family_info(family).temporal_downscale else None
        sample = lambda m: synthetic.sample(m, family, 64, 64, 2, 2.0, positive, negative, seed=3, frames=frames)  # noqa: E731
    adapter = by_family(family)
    eager = sample(model)
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    # A family keyed per step replays a schedule from its third run (the first counts, the second
    # captures); the gate's cost judgement made plain, as in that family's own test.
    runs = 3 if adapter.keys_per_step else 1
    if adapter.keys_per_step:
        from bcg_runtime.core import stats

        monkeypatch.setattr(stats.CaptureCosts, "repays", lambda self, calls, size: calls > 0)
    for _ in range(runs):
        assert torch.equal(sample(bcg_model), eager)
    run = session_of(bcg_model).last_run
    if adapter.gpu_verified:
        assert run["replayed"] >= 1, run
    else:
        [(reason, n)] = run["eager"].items()
        why = adapter.opt_in_reason or f"{adapter.display_name} support awaits its GPU exactness test"
        assert n == run["calls"] and why in reason, run
        assert "BCG_UNVERIFIED_FAMILIES=1" in reason, reason


def text_label(family, tokens):
    """How a label names a caption of ``tokens`` tokens: ``txt40``, or its bucket's range
    (``txt33-64``) for a family whose model pads captions itself (``ModelAdapter.text_bucket``)."""
    from bcg_runtime.comfy.models import by_family

    bucket = by_family(family).text_bucket(tokens)
    return f"txt{tokens}" if bucket is None else f"txt{bucket[0]}-{bucket[1]}"


def _size_label(frames):
    """How a label names a 64x64 px sample: ``64x64`` for an image (``frames`` None), else
    ``64x64x{frames}f`` (pixel frames)."""
    return "64x64" if frames is None else f"64x64x{frames}f"


def _check_prompt_signatures(nodes, model, family, lengths, batched, frames, shapes):
    """The run both public prompt checks below describe: BCG Apply's defaults (mode full), prompts
    of ``lengths`` tokens (positive, negative), 64x64 px, 3 steps, each sample equal to eager. At
    each of ``frames`` (None: an image) cfg 2 issues one call a step of each signature (``txt512
    b2`` when ``batched``, else ``txt{n} b1`` for each length), each captured on its first call and
    replayed after; the output is ``shapes[i]`` where given. At the last frame count another prompt
    pair of those lengths and another seed replays every call with no new capture; cfg 1 replays
    the positive's batch-1 graph if one was captured, else captures it on its first call."""
    import torch

    from bench import synthetic

    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    assert session.config.mode.value == "full"

    def both(cfg, pos, neg, seed, n):
        out = synthetic.sample(bcg_model, family, 64, 64, 3, cfg, pos, neg, seed=seed, frames=n)
        assert torch.equal(out, synthetic.sample(model, family, 64, 64, 3, cfg, pos, neg, seed=seed, frames=n)), (
            cfg,
            seed,
            n,
        )
        return out

    first = "first call, captured"
    signatures = (
        [f"{text_label(family, lengths[0])} b2"] if batched else [f"{text_label(family, n)} b1" for n in lengths]
    )
    positive, negative = conds(family)
    assert tuple(synthetic.family_info(family).prompt_lengths) == tuple(lengths), (family, lengths)  # what conds() sent
    for i, n in enumerate(frames):
        out = both(2.0, positive, negative, 3, n)
        assert shapes is None or out.shape == shapes[i], (n, out.shape)
        run = session.last_run
        assert run["calls"] == 3 * len(signatures) and run["replayed"] == 2 * len(signatures), run
        assert run["eager"] == {f"{first}: {_size_label(n)} {sig}": 1 for sig in signatures}, run
    captures = len(signatures) * len(frames)
    assert session.runner.stats.captures == captures, session.last_run
    other_pos, other_neg = (synthetic.make_conditioning(family, n, seed=seed) for n, seed in zip(lengths, (5, 6)))
    both(2.0, other_pos, other_neg, 4, frames[-1])
    assert session.last_run["replayed"] == 3 * len(signatures) and session.runner.stats.captures == captures, (
        session.last_run
    )
    both(1.0, other_pos, other_neg, 5, frames[-1])
    positive_b1 = f"{text_label(family, lengths[0])} b1"
    new = {} if positive_b1 in signatures else {f"{first}: {_size_label(frames[-1])} {positive_b1}": 1}
    run = session.last_run
    assert run["calls"] == 3 and run["replayed"] == 3 - len(new) and run["eager"] == new, run
    return bcg_model


def check_each_prompt_length_is_its_own_graph(nodes, model, family, frames=(None,), shapes=None):
    """An exact-length family (40- and 17-token prompts, 64² px, mode full) through BCG Apply's
    defaults: at each of ``frames`` (None: an image, sampled without frames; a video's frame counts
    in pixel frames, labelled ``64x64x{n}f``) cfg 2 runs cond and uncond as two batch-1 calls
    (``txt40 b1``, ``txt17 b1``), each captured on first sight and replayed after, equal to eager,
    the output of ``shapes[i]`` where given: two graphs a frame count. At the last frame count
    another prompt pair of the same lengths and another seed replays with no new capture, and cfg 1
    replays the positive's graph alone. Returns the BCG model (its session holds those graphs)."""
    return _check_prompt_signatures(nodes, model, family, (40, 17), False, frames, shapes)


def check_padded_prompts_batch_cond_and_uncond(nodes, model, family, frames=(None,), shapes=None, length=512):
    """A family whose text encoder pads every prompt to ``length`` tokens (512 by default; 64² px,
    mode full) through BCG Apply's defaults: at each of ``frames`` (None: an image, sampled
    without frames; a video's frame counts in pixel frames, labelled ``64x64x{n}f``) cfg 2 batches
    cond and uncond into one call (``txt{length} b2``), captured on first sight and replayed after,
    equal to eager, the output of ``shapes[i]`` where given: one graph a frame count. At the last
    frame count another pair of ``length``-token prompts and another seed replays with no new
    capture, and cfg 1 sends the positive alone: a batch-1 signature (``txt{length} b1``) of its
    own, captured on its first call, replayed after, equal to eager."""
    _check_prompt_signatures(nodes, model, family, (length, length), True, frames, shapes)


def check_conditioning_inputs_are_read_live(
    nodes, model, family, inputs, frames=None, absent_is_another_signature=False, bcg_model=None
):
    """The conditioning entries a class adds (``inputs(seed)``: the extras its nodes put in the
    positive and negative, the same shapes for every seed), sampled 64x64 px (``frames`` pixel
    frames for a video family), 2 steps at cfg 1 through BCG Apply's defaults: the first call is
    captured and the second replayed, bit-equal to eager; other values of the same inputs replay
    that graph with no new capture, bit-equal to eager, and change eager's output (the inputs
    reach the DiT, so the replay reads them live). With ``absent_is_another_signature`` the plain
    prompts (no such input) are a signature of their own, captured apart and exact, and differ
    from the sample with the input. ``bcg_model``: BCG Apply's model made otherwise (on the GPU
    image, which has no PyAV for the node shells, ``api.apply``); ``nodes`` is then unused."""
    import torch

    from bench import synthetic

    if bcg_model is None:
        (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, negative = conds(family)

    def with_inputs(conditioning, extras):
        return [[context, {**options, **extras}] for context, options in conditioning]

    def both(pos, neg):
        out = synthetic.sample(bcg_model, family, 64, 64, 2, 1.0, pos, neg, seed=3, frames=frames)
        eager = synthetic.sample(model, family, 64, 64, 2, 1.0, pos, neg, seed=3, frames=frames)
        assert torch.equal(out, eager)
        return eager

    first = both(with_inputs(positive, inputs(1)), with_inputs(negative, inputs(1)))
    run = session.last_run
    assert run["calls"] == 2 and run["replayed"] == 1, run
    [(reason, n)] = run["eager"].items()
    assert n == 1 and reason.startswith("first call, captured"), run
    captures = session.runner.stats.captures
    other = both(with_inputs(positive, inputs(2)), with_inputs(negative, inputs(2)))
    assert session.last_run["replayed"] == 2 and session.runner.stats.captures == captures, session.last_run
    assert not torch.equal(first, other), f"{family}: other input values left eager's output unchanged"
    if absent_is_another_signature:
        plain = both(positive, negative)
        assert session.runner.stats.captures == captures + 1, session.last_run
        assert not torch.equal(plain, first), f"{family}: the input left eager's output unchanged"
    return bcg_model


def check_an_unwarmed_size_falls_back_with_its_label(nodes, model, family, tokens, batch=1, shape=None):
    """BCG Apply capturing only what a warm-up takes; BCG Warmup Capture at 64x64 and batch
    ``batch``: the report's line for ``64x64 txt{tokens} b{batch}`` says captured, replay exact.
    Sampling 64x64 (2 steps, cfg 1 for batch 1, else cfg 2) replays both calls, equal to eager, the
    output of ``shape`` where given; 96x64, which the warm-up did not take, runs both calls eager
    labelled ``not captured: 96x64 txt{tokens} b{batch}``, equal to eager."""
    import torch

    signature = f"{text_label(family, tokens)} b{batch}"
    cfg = 1.0 if batch == 1 else 2.0
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    positive, negative = conds(family)
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", str(batch), positive, negative).args
    lines = [line for line in report.splitlines() if line.startswith(f"64x64 {signature}: captured")]
    assert len(lines) == 1 and lines[0].endswith("replay exact"), report
    out, eager = sample_both(family, warmed, model, 64, 64, 2, cfg, positive, negative, seed=3)
    assert torch.equal(out, eager)
    if shape is not None:
        assert out.shape == shape, out.shape
    assert session_of(warmed).last_run["replayed"] == 2, session_of(warmed).last_run
    out, eager = sample_both(family, warmed, model, 96, 64, 2, cfg, positive, negative, seed=3)
    assert torch.equal(out, eager)
    assert session_of(warmed).last_run["eager"] == {f"not captured: 96x64 {signature}": 2}, session_of(warmed).last_run


def with_extras(conditioning, extras):
    """``conditioning`` with ``extras`` set on every entry (what a conditioning node adds)."""
    return [[context, {**options, **extras}] for context, options in conditioning]


class OneModelAtATime:
    """``get(family)``: the family's depth-1 model (real width, random weights) in bf16, one held
    at a time (bf16 halves what float32 would hold on a shared CPU machine; the checks are
    bit-equality either way); skipped where this ComfyUI builds the family otherwise."""

    def __init__(self):
        self.held = {}

    def get(self, family):
        if family not in self.held:
            import torch

            from bench import synthetic

            self.release()
            skip_unless_host_builds(family)
            self.held[family] = synthetic.load_model(family, depth=1, seed=0, dtype=torch.bfloat16)
        return self.held[family]

    def release(self):
        self.held.clear()
        gc.collect()


def check_inputs_are_read_live(
    family,
    model,
    bcg_model,
    inputs,
    frames=None,
    other=None,
    other_is_new=True,
    latent=None,
    noise_mask=None,
    width=64,
    height=64,
):
    """A class's conditioning inputs through ``comfy.sample.sample`` (2 steps, cfg 1: one call a
    step, the family's positive prompt): with ``inputs(1)`` (conditioning entries, seed -> dict) the
    first call is captured and the second replayed, bit-equal to eager; ``inputs(2)`` (other values,
    the same shapes) replays the same graph, bit-equal to eager, and changes eager's output (the
    input reaches the DiT, so a frozen input would fail here). ``latent(seed)`` / ``noise_mask(seed)``
    give the sampler's input latent and its noise mask where the class takes its input there.
    ``other`` (entries, seed 1's latent) is another signature when ``other_is_new`` (captured apart,
    exact), else the same one (replayed with no new capture, exact); either way its output differs
    from ``inputs(1)``'s. Returns the session."""
    import torch

    from bench import synthetic

    session = session_of(bcg_model)
    positive, _ = conds(family)

    def both(extras, seed):
        cond = with_extras(positive, extras)
        kwargs = {
            "seed": 5,
            "frames": frames,
            "latent": latent(seed) if latent else None,
            "noise_mask": noise_mask(seed) if noise_mask else None,
        }
        out = synthetic.sample(bcg_model, family, width, height, 2, 1.0, cond, cond, **kwargs)
        return out, synthetic.sample(model, family, width, height, 2, 1.0, cond, cond, **kwargs)

    captures = session.runner.stats.captures
    out, eager = both(inputs(1), 1)
    assert torch.equal(out, eager), (out - eager).abs().max()
    assert session.runner.stats.captures == captures + 1 and session.last_run["replayed"] == 1, session.last_run

    out2, eager2 = both(inputs(2), 2)
    assert torch.equal(out2, eager2), (out2 - eager2).abs().max()
    assert not torch.equal(eager, eager2), "the inputs do not change the output: this test would not see a frozen input"
    assert session.runner.stats.captures == captures + 1 and session.last_run["replayed"] == 2, session.last_run

    if other is not None:
        out3, eager3 = both(other, 1)
        assert torch.equal(out3, eager3), (out3 - eager3).abs().max()
        assert not torch.equal(eager3, eager), "the other inputs change nothing"
        if other_is_new:
            assert session.runner.stats.captures == captures + 2 and session.last_run["replayed"] == 1, session.last_run
        else:
            assert session.runner.stats.captures == captures + 1 and session.last_run["replayed"] == 2, session.last_run
    return session
