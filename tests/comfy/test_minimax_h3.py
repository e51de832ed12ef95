"""MiniMax H3 (``MiniMaxH3``, ComfyUI 0.33.0): one graph per sampling step, on a depth-1 model of
the real width inside real ComfyUI.

The forward reads its step on the host (``float(1 - sigma)``) and steers with it, so each call is
keyed on the step and its capture is handed the live call's reads (core/host_reads.py). The CPU
stand-in refuses a read inside a capture as CUDA does, so a capture that read the device here would
fail, not pass. The joint latent (video ``[1, 24, T, H/16, W/16]`` + audio ``[1, 32, 2, A]``, from
``MiniMaxH3AV.fix_empty_latent`` of the empty 32-channel latent) comes back packed, so
``torch.equal`` compares both streams. test_full_size_cuda.py runs the real width on the H200
(``BCG_GPU_FAMILIES=minimax_h3``).

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/minimax_h3.py``. The sampler runs the joint latent (``EmptyMiniMaxH3LatentAV``, or
``MiniMaxH3AV.fix_empty_latent`` of an empty 32-channel latent: a NestedTensor of the video ``[1, 24, T, H/16,
W/16]`` and the audio ``[1, 32, 2, A]``); ``BaseModel._apply_model`` unpacks it (``latent_shapes``), so the DiT's
``_forward`` (behind the DIFFUSION_MODEL wrappers) receives ``x = [video, audio]`` and returns ``[video, audio]``.
The outer ``forward``'s audio-scale carry runs outside BCG's hook, eager. The forward reads its step on the host
(comfy/ldm/minimax/model.py, ``_forward``):

- l.576-578: ``sigma_v = (timestep.flatten()[0] / 1000).float()``, ``t_v = float(1 - sigma_v)``,
  ``t_a = float(1 - time_shift_sigma(sigma_v, shift_v, shift_a))``: two device-to-host reads of
  values determined by ``timestep.flatten()[0]``. From them Python builds ``seg_t``,
  ``unique_t`` / ``t_row`` (l.611-612) and the ``mod_segments`` row indices into the
  timestep-embedding table, and ``t_vals = torch.tensor(unique_t, device=...)`` (l.683) copies
  the numbers to the device.

So the call is keyed on the exact value of ``timestep.flatten()[0]`` (``call_key`` reads it on the host before
dispatch, as the forward does a line later: one more synchronisation per call), and a capture hands the forward
the live call's two reads (``replay_host_reads``, ``bcg_runtime/core/host_reads.py``): a graph serves exactly the
calls at its step, and a schedule replays from its second run (batch jobs with fixed steps; ``keys_per_step``
tells the capture gate that a key comes back once per run, not once per step). The other values Python reads:

- ``shift_v`` / ``shift_a`` (l.574-575): ``transformer_options`` entries
  (``minimax_h3_sigma_shift_*``, set by ModelSamplingMiniMaxH3) that ``options.py`` keys by value;
  without them the model's constructor values (its config, fixed).
- ``minimax_payload`` (a ``CONDConstant`` dict, ``opaque_args``): ``layout`` (a
  ``PackedLayout``: its ``signature`` and ``segments``, and its tensors ``img_update``,
  ``audio_update``, ``position_ids`` on the host, all made from that signature when there are no
  keyframes or references), ``text_token_tags`` (a CPU tensor read by ``.tolist()``, l.630),
  ``visual_cond_noise_aug`` / ``audio_cond_noise_aug``: all in the key by value.
  ``keyframes`` / ``refs`` / ``cond_*_latents`` (image-to-video, references: seeded host noise
  and value-dependent rows) make the call eager: ``CONDITIONS_REFUSAL``.
- ``denoise_mask`` / ``audio_denoise_mask`` (l.593-608): ``rows_t.unique()``, ``.tolist()`` and
  ``bool(...all())`` of mask values: eager, ``DENOISE_MASK_REFUSAL``.
- Host copies staged through pinned buffers (``stage_host_copies``): ``layout.img_update`` and
  ``audio_update`` (``.to(device)``), ``position_ids`` (in ``rope_freqs``) and ``t_vals``; their
  values come from the keyed signature and step.
- ``comfy.model_prefetch.make_prefetch_queue`` is None for BCG's resident twin
  (``prefetch_dynamic_vbars`` False); a Dynamic VRAM model is refused before (``guards``).

Batch 1 only (l.557: ``MiniMax H3 supports batch size 1``): cond and uncond are two calls.

Not yet: the warm-up plan holds typed frame counts to ``temporal_scale``'s 4k+1 grid, and H3's latent node snaps
to 17k+5 (5 frames = 2 latent frames on both; 124 frames are 37 latent frames for the node, 31 for the plan). A
warm-up serves one step of a schedule anyway (its sigma is the schedule's first); leave the frame count out, or
warm up at 5 frames.
"""

import contextlib
import dataclasses

import pytest
import torch
from bcg_testing import check_gpu_verification_state, session_of, skip_unless_host_builds

from bench import synthetic
from bcg_runtime.comfy.models.minimax_h3 import ADAPTER, DENOISE_MASK_REFUSAL, HOST_READS, pixel_frames

pytestmark = pytest.mark.comfy
FAMILY = "minimax_h3"
STEPS = 3
FIRST = "first call, captured"


@pytest.fixture(scope="module")
def model():
    skip_unless_host_builds(FAMILY)
    return synthetic.load_model(FAMILY, depth=1, seed=0)


def conds(lengths=(12, 7)):
    return tuple(synthetic.make_conditioning(FAMILY, n, seed=s) for n, s in zip(lengths, (1, 2)))


def sample(m, cfg=2.0, seed=3, steps=STEPS, **kwargs):
    positive, negative = conds()
    return synthetic.sample(m, FAMILY, 64, 64, steps, cfg, positive, negative, seed=seed, frames=5, **kwargs)


def labels(run_eager: dict) -> set[str]:
    return {reason.split(": ", 1)[1] for reason in run_eager}


def test_every_host_read_of_the_forward_is_listed_with_what_makes_it_safe():
    """A line of ``_forward`` that turns a value into Python and is not in ``HOST_READS`` fails
    here: ComfyUI changed the forward, and the key may no longer determine what it reads."""
    import inspect
    import re

    minimax = pytest.importorskip(
        "comfy.ldm.minimax.model", reason="this ComfyUI has no MiniMax H3 (added after 0.8.0)"
    )
    MiniMaxH3Model = minimax.MiniMaxH3Model

    source = inspect.getsource(MiniMaxH3Model._forward).splitlines()
    spelled = re.compile(r"\b(float|int|bool)\(|\.(tolist|item|unique|cpu|numpy)\(")
    found = {line.strip() for line in source if spelled.search(line)}
    assert found == set(HOST_READS), (sorted(found - set(HOST_READS)), sorted(set(HOST_READS) - found))


def test_a_final_layer_that_reads_the_schedule_leaves_the_model_unchanged(pack, model, standin_graphs):
    """A later ComfyUI (Comfy-Org/ComfyUI@2c64d4a) gives H3's FinalLayer the sampler's schedule
    (``forward(x, t_emb, video_seg, audio_seg, sigma, sample_sigmas, shifts)``) and, for a
    checkpoint with a PDD head bank, picks heads by the next sigma: BCG keys only the step, so BCG
    Apply leaves such a model unchanged with the reason (no twin, no per-call refusal). 0.33.0's FinalLayer reads no schedule: served as before.
    The later layer is written here with its signature and head bank only (no such ComfyUI runs
    here)."""
    import torch.nn as nn

    from bcg_runtime.comfy.models.minimax_h3 import SCHEDULE_HEADS_REFUSAL, reads_the_schedule

    dm = model.model.diffusion_model
    assert not reads_the_schedule(dm) and not ADAPTER.for_model(model).schedule_heads

    class LaterFinalLayer(nn.Module):  # the later signature, its bank of heads in one Linear
        def __init__(self, heads):
            super().__init__()
            self.video_out = nn.Linear(8, 4 * heads)
            self.video_out.out_features = 4

        def forward(self, x, t_emb, video_seg, audio_seg, sigma, sample_sigmas, shifts):
            raise AssertionError("not called")

    holder = nn.Module()
    holder.final_layer = LaterFinalLayer(heads=1)
    assert not reads_the_schedule(holder)  # one head: the later forward returns before it reads the schedule
    holder.final_layer = LaterFinalLayer(heads=8)
    assert reads_the_schedule(holder)

    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    assert session_of(bcg_model).runner.disabled_reason is None
    later = dataclasses.replace(session_of(bcg_model).adapter, schedule_heads=True)
    assert later.model_refusal() == SCHEDULE_HEADS_REFUSAL and later.refusal({"minimax_payload": {}}) is None

    # BCG Apply on such a model: off at once, with the reason, and no twin taken. (Set back by
    # hand: pytest's monkeypatch deletes a submodule on undo, as nn.Module keeps it out of __dict__.)
    original = dm.final_layer
    dm.final_layer = holder.final_layer
    try:
        (off,) = nodes["BCGApply"].execute(model, "auto").args
    finally:
        dm.final_layer = original
    assert session_of(off).adapter.schedule_heads
    assert SCHEDULE_HEADS_REFUSAL in str(session_of(off).runner.disabled_reason)


def test_pixel_frames_follow_the_17k_plus_5_grid():
    assert [pixel_frames(t) for t in (1, 2, 6, 7, 12)] == [1, 5, 18, 22, 39]


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch, lambda m: sample(m, steps=2))


def test_each_step_is_its_own_graph_and_a_schedule_replays_from_a_later_run(pack, model, standin_graphs, monkeypatch):
    """Run 1: every step is new and comes back at most once per run, so nothing is captured yet
    (the gate counts runs for a per-step family); run 2: the schedule recurs, each step is
    captured on sight; run 3: every call replays. Each run equals eager, both streams."""
    from bcg_runtime.core import stats

    # The gate's judgement (capture cost against replay savings) made plain: a capture repays
    # once a key is expected back at all. What is under test is what the session counts.
    monkeypatch.setattr(stats.CaptureCosts, "repays", lambda self, calls, size: calls > 0)
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    calls = 2 * STEPS  # batch 1 only: cond and uncond are two calls a step

    out, eager = sample(bcg_model), sample(model)
    assert out.shape == (1, 1, 24 * 2 * 4 * 4 + 32 * 2 * 8), out.shape  # 5 frames: 2 video latents, 8 audio
    assert torch.equal(out, eager), (out - eager).abs().max().item()
    run = session.last_run
    assert run["calls"] == calls and run["replayed"] == 0 and session.runner.stats.captures == 0, run
    assert sum(run["eager"].values()) == calls and all("not captured yet" in r for r in run["eager"]), run

    assert torch.equal(sample(bcg_model), eager)
    run = session.last_run
    assert session.runner.stats.captures == calls and run["replayed"] == 0, run
    assert all(r.startswith(FIRST) for r in run["eager"]), run
    steps = {label.rsplit(" t", 1)[1] for label in labels(run["eager"])}
    assert len(steps) == STEPS and len(labels(run["eager"])) == calls, run  # a graph per step and prompt
    assert labels(run["eager"]) == {f"64x64x5f a8 txt{n} b1 t{step}" for n in (12, 7) for step in steps}, run

    # another seed, the same schedule: every step replays, bit-equal to eager
    out, eager = sample(bcg_model, seed=4), sample(model, seed=4)
    assert torch.equal(out, eager), (out - eager).abs().max().item()
    run = session.last_run
    assert run["replayed"] == calls and session.runner.stats.captures == calls, run

    # a schedule of other steps: none of its calls may replay a graph of the first
    out, eager = sample(bcg_model, steps=2), sample(model, steps=2)
    assert torch.equal(out, eager)
    assert session.last_run["replayed"] == 2, session.last_run  # the one step both share (sigma max), two prompts


@pytest.mark.capture_costs
def test_the_gate_expects_a_steps_calls_per_run_times_the_runs_it_was_met_in(pack, model, standin_graphs, monkeypatch):
    """The capture gate with measured costs (100 ms saved a replay, a capture 500 ms) and cond and
    uncond of one length (one key, two calls a run): a step met in n earlier runs expects 2 x n
    calls, so it waits through run 3 (2 x 2 x 100 = 400 ms) and is captured in run 4 (600 ms).
    Counting the runs twice (calls left := earlier runs, times the runs seen) captured in run 3: on
    a server that was a prompt capturing 28 steps at once, about 45 s, for 30 expected calls
    where 10 were due (docs/benchmarks.md, MiniMax H3 on a stock server)."""
    from bcg_runtime.core import stats

    monkeypatch.setattr(stats.CaptureCosts, "record", lambda self, *measured: None)  # the costs stay as set
    monkeypatch.setattr(stats.CaptureCosts, "saving_of", lambda self, size: 0.1)  # for every size
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    session.runner.stats.costs.overheads.append(0.5)
    positive, negative = conds(lengths=(12, 12))

    def run(m):
        return synthetic.sample(m, FAMILY, 64, 64, STEPS, 2.0, positive, negative, seed=3, frames=5)

    eager = run(model)
    for run_index in range(3):
        assert torch.equal(run(bcg_model), eager), run_index
        assert session.runner.stats.captures == 0, (run_index, session.last_run)
        assert all("not captured yet" in r for r in session.last_run["eager"]), session.last_run
    assert torch.equal(run(bcg_model), eager)
    assert session.runner.stats.captures == STEPS, session.last_run  # every step, once: its uncond replays
    assert session.last_run["replayed"] == STEPS, session.last_run


def test_its_shift_node_is_served_and_each_audio_shift_is_its_own_graph(pack, model, standin_graphs, monkeypatch):
    """ModelSamplingMiniMaxH3 (``MiniMaxH3SigmaShift``, the node H3 workflows carry) puts both flow
    shifts in transformer_options, where the forward reads them: BCG keys them by value, so the
    schedule under the node replays, and a new audio shift (the same sigmas: the video shift
    drives the schedule) is new graphs, never the old shift's."""
    from comfy_extras.nodes_minimax_h3 import MiniMaxH3SigmaShift

    from bcg_runtime.core import stats

    monkeypatch.setattr(stats.CaptureCosts, "repays", lambda self, calls, size: calls > 0)  # as above
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    calls = 2 * STEPS
    for shift_audio in (2.0, 4.0):
        shifted, reference = (MiniMaxH3SigmaShift.execute(m, 6.0, shift_audio).args[0] for m in (bcg_model, model))
        eager = sample(reference)
        for run_index in range(3):
            assert torch.equal(sample(shifted), eager), (shift_audio, run_index)
        run = session.last_run
        assert run["replayed"] == calls and not any("transformer_options" in r for r in run["eager"]), run
        assert session.runner.stats.captures == calls * (1 if shift_audio == 2.0 else 2), session.runner.stats
    assert not torch.equal(eager, sample(MiniMaxH3SigmaShift.execute(model, 6.0, 2.0).args[0])), (
        "the audio shift changes the output, so a graph of another shift would be a wrong latent"
    )


def test_the_step_is_in_the_key(model):
    """Two calls that differ only in the step's value have different keys (the graph of one step
    would hand the other its timestep rows)."""
    video, audio = torch.zeros(1, 24, 2, 4, 4), torch.zeros(1, 32, 2, 8)
    call = {"x": [video, audio], "timestep": torch.tensor([1000.0]), "minimax_payload": {}}
    later = {**call, "timestep": torch.tensor([937.5])}
    assert ADAPTER.call_key(call) != ADAPTER.call_key(later)
    assert ADAPTER.call_key(call) == ADAPTER.call_key({**call, "timestep": torch.tensor([1000.0])})
    assert ADAPTER.label(later).endswith(" t0.0625") and "64x64x5f a8" in ADAPTER.label(later)
    # the step is read at each ask: an in-place change of that tensor reads again, also for a
    # tensor made under inference mode (ComfyUI samples there), which keeps no version counter
    for mode in (contextlib.nullcontext, torch.inference_mode):
        with mode():
            step = torch.tensor([1000.0])
            first = ADAPTER.call_key({**call, "timestep": step})
            assert ADAPTER.label({**call, "timestep": step}).endswith(" t0.0000")
            step.fill_(937.5)
            assert ADAPTER.call_key({**call, "timestep": step}) == ADAPTER.call_key(later) != first


def test_a_warm_up_says_it_cannot_know_the_schedule_and_captures_nothing(pack, model, standin_graphs):
    """BCG Warmup Capture would capture its one placeholder step, a graph no schedule is known to
    use: the report says why it captured nothing, and sampling still equals eager."""
    from bcg_runtime.comfy.warmup import per_step_refusal

    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    positive, negative = conds()
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64x5", "", "1", positive, negative).args
    session = session_of(warmed)
    assert per_step_refusal(ADAPTER) in report and "sampling step" in report, report
    assert session.runner.stats.captures == 0, session.runner.stats
    assert torch.equal(sample(warmed), sample(model))
    # frames on H3's own grid (17k+5: 22) meet the same report, not a 4k+1 frame error
    _, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64x22", "", "1", positive, negative).args
    assert per_step_refusal(ADAPTER) in report, report


def test_warm_up_only_leaves_the_model_unchanged_with_the_reason_and_takes_no_twin(
    pack, model, standin_graphs, monkeypatch
):
    """Capture 'warm-up only' on H3 could never replay (no warm-up can capture a step), so BCG
    Apply takes no fixed-address twin, which under Dynamic VRAM is a second, fully loaded copy
    that sampled slower than ComfyUI's own model on a stock server: BCG is off for this model with
    the reason, every call counted under it, the output eager's. 'on first call' still asks for
    the twin; a model BCG Apply refuses for another reason known at Apply does not."""
    from bcg_runtime.comfy import api

    asked = []
    real = api.fixed_address_clone
    monkeypatch.setattr(api, "fixed_address_clone", lambda m: asked.append(m) or real(m))
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture="warm-up only").args
    session = session_of(bcg_model)
    assert asked == [] and session.permanent_refusal == api.warmup_only_refusal(ADAPTER, session.config.capture)
    assert "warm-up only" in session.permanent_refusal and "on first call" in session.permanent_refusal
    assert torch.equal(sample(bcg_model), sample(model))
    [(reason, n)] = session.last_run["eager"].items()
    assert session.permanent_refusal in reason and n == session.last_run["calls"] == 2 * STEPS, session.last_run
    nodes["BCGApply"].execute(model, "auto")
    assert len(asked) == 1
    # Any refusal known at Apply takes no twin either: here the family awaiting its GPU test.
    monkeypatch.delenv(api.UNVERIFIED_OPT_IN, raising=False)
    monkeypatch.setattr(api, "adapter_for", lambda m: dataclasses.replace(ADAPTER, gpu_verified=False))
    (refused,) = nodes["BCGApply"].execute(model, "auto").args
    assert len(asked) == 1 and "awaits its GPU exactness test" in session_of(refused).permanent_refusal


def test_a_noise_mask_or_an_unknown_payload_entry_runs_eager_with_the_reason(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    latent = torch.zeros(1, 32, 2, 4, 4)
    mask = torch.ones(1, 1, 2, 4, 4)
    mask[..., :2] = 0.0
    out = sample(bcg_model, steps=2, latent=latent, noise_mask=mask)
    assert torch.equal(out, sample(model, steps=2, latent=latent, noise_mask=mask))
    [(reason, n)] = session.last_run["eager"].items()
    assert DENOISE_MASK_REFUSAL in reason and n == session.last_run["calls"], session.last_run

    payload_call = {"minimax_payload": {"layout": None, "something_new": 1.0}}
    assert "something_new" in ADAPTER.refusal(payload_call)
    assert ADAPTER.refusal({"minimax_payload": {"keyframes": [{"latent": None}]}}) is not None


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"
)
@pytest.mark.parametrize(
    "size, steps, cfg",
    [((768, 512, 5), 3, 2.0), ((1344, 768, 124), 2, 1.0)],  # a small clip, and the latent node's default
    ids=["768x512x5f-cfg2", "1344x768x124f-default"],
)
def test_real_width_schedules_replay_bit_exact_on_cuda(pack, size, steps, cfg, monkeypatch):
    """At the real width (``RECIPE.gpu_test_depth`` blocks): the schedule's second run captures
    each step on real CUDA graphs (the two host reads handed back, no sync inside a capture), the
    third replays every call, each run bit-equal to eager. Prints eager and replay times of one run
    (back to back, one process) for docs/benchmarks.md."""
    schedules_replay_bit_exact(pack, synthetic.family_info(FAMILY).gpu_test_depth, size, steps, cfg, monkeypatch)


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"
)
def test_full_depth_schedule_replays_bit_exact_on_cuda(pack, monkeypatch):
    """The whole model (50 blocks of 5376 and the 2-layer token refiner, as the checkpoint
    ships), a small clip with cfg: the evidence ``gpu_verified`` asks for."""
    schedules_replay_bit_exact(pack, None, (768, 512, 5), 3, 2.0, monkeypatch)


def schedules_replay_bit_exact(pack, depth, size, steps, cfg, monkeypatch):
    """Sample a schedule eager and through BCG Apply three times (seeds 3, 3, 4): the first BCG
    run only counts, the second captures every call, the third replays them; each torch.equal to
    its eager twin. Every run under ``torch.inference_mode``, as in a ComfyUI prompt."""
    import time

    from bcg_testing import release_cuda_memory

    from bcg_runtime.core import stats

    monkeypatch.setattr(stats.CaptureCosts, "repays", lambda self, calls, size: calls > 0)  # as in the CPU test
    skip_unless_host_builds(FAMILY)
    model = synthetic.load_model(FAMILY, depth=depth, seed=0, device="cuda")
    depth = depth or "full"
    width, height, frames = size
    positive, negative = conds((96, 40))

    def run(m, seed):
        torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.inference_mode():  # as ComfyUI's executor runs a prompt (no version counters)
            out = synthetic.sample(m, FAMILY, width, height, steps, cfg, positive, negative, seed=seed, frames=frames)
        torch.cuda.synchronize()
        return out, time.perf_counter() - start

    try:
        _, nodes = pack
        (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
        session = session_of(bcg_model)
        calls = steps * (2 if cfg > 1 else 1)
        run(model, 1)  # the first sampling of the model (lazy init): not a reference
        for seed, replayed in ((3, 0), (3, 0), (4, calls)):
            eager, eager_s = run(model, seed)
            out, bcg_s = run(bcg_model, seed)
            last = session.last_run
            assert torch.equal(out, eager), (seed, (out - eager).abs().max().item(), last)
            assert last["replayed"] == replayed, last
        assert session.runner.stats.captures == calls, session.runner.stats
        peak = torch.cuda.max_memory_allocated() / 2**30
        print(
            f"minimax_h3 {width}x{height}x{frames}f depth {depth}, {steps} steps cfg {cfg}: eager {eager_s:.3f} s, "
            f"replayed {bcg_s:.3f} s ({eager_s / bcg_s:.2f}x), graphs {session.runner.memory_bytes / 2**30:.1f} GiB, "
            f"capture {session.runner.stats.capture_seconds:.1f} s for {calls} graphs, peak allocated {peak:.1f} GiB"
        )
    finally:
        del model
        release_cuda_memory(unload=True)
