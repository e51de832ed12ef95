"""Wan 2.1 / 2.2 (``WAN21_T2V``): the adapter inside real ComfyUI, on a depth-1 14B-shaped model.

Latents are 5-D ``[B,16,T,H,W]``; the key holds every tensor's shape, so each frame count is its
own signature, and labels say it in pixel frames ((T-1)*4 + 1: ``64x64x5f txt512 b2``). umT5
pads every prompt to 512 tokens, so cond and uncond of up to 512 tokens batch into one call; a
longer prompt keeps its length and runs apart. The typed warm-up takes ``WIDTHxHEIGHTxFRAMES``.
CPU stand-in here (64x64 px, 1, 5 and 9 frames); ``test_480p_video_is_bit_exact_on_cuda`` runs
832x480 at 33 and 17 frames at the real width on the H200.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/wan.py``, read for host syncs and value-dependent branches in comfy/ldm/wan/model.py
(0.8.0 has the same forward without patches, ``context_latents`` and the INT8 feed-forward). Wan 2.2 TI2V 5B
(``WAN22_T2V``: dim 3072, 48-channel ``Wan22`` latent at 16x) gets per-frame timesteps ``[B, T]`` from
``WAN22.process_timestep`` when a ``denoise_mask`` is present. The umT5 tokenizer pads with ``min_length=512``,
pad rows zeroed by ``zero_out_masked``; the DiT itself does not pad (``text_len`` is stored, never used in the
forward). I2V: the image latent and mask reach the DiT concatenated into ``x`` (``c_concat``: 36 channels),
CLIP-vision features as ``clip_fea`` ``[B, 257, 1280]``.

- ``repeat_e`` (l.167) and ``WanAttentionBlock.forward`` / ``Head.forward`` ``e.ndim`` branches
  (l.248, l.379): shapes only (scalar vs per-frame timesteps), harmless.
- ``WanFeedForward`` -> ``comfy.ops.linear_input_act`` (l.182, ops.py l.958): branches on the
  weight's type (INT8 or not), a fact of the loaded model, harmless.
- ``_forward`` (l.686): ``pad_to_patch_size``, ``t_len``, ``rope_encode`` (l.638) use shapes and
  ``rope_options`` (keyed by options.py); ``torch.linspace`` bounds are Python numbers from those.
  ``if clip_fea is not None`` / ``context_latents`` / ``"reference_latent" in kwargs``: presence
  of arguments, in the key. ``unpatchify`` ``math.prod(grid_sizes)`` (l.718): shapes.
- ``forward_orig`` writes ``transformer_options["grid_sizes"]`` (l.567): bookkeeping derived from
  shapes (options.py ignores it, like Flux's ``img_slice``). ``patches`` / ``patches_replace``
  make the call eager (options.py).
- ``sinusoidal_embedding_1d`` (l.28) builds ``torch.arange(half)`` on the host and copies it to
  the GPU (``.to(position)``) every call: a pageable copy, which capture refuses. Its value is a
  function of ``freq_dim`` (the model's config) alone, so ``stage_host_copies`` stages it through a
  pinned buffer the graph holds (``bcg_runtime/core/host_copies.py``); the proof replay would
  show a value that was not constant.
- No ``.item()``, ``.tolist()``, ``.cpu()``, ``nonzero`` or boolean-mask indexing in the forward,
  so mode 'full' is safe. The forward goes through the DIFFUSION_MODEL wrapper
  (``WanModel.forward`` -> ``WrapperExecutor`` around ``_forward``, l.679) in both hosts.
"""

import re

import pytest
import torch
from bcg_testing import (
    WARMUP_ONLY,
    check_gpu_verification_state,
    check_padded_prompts_batch_cond_and_uncond,
    conds,
    release_cuda_memory,
    sample_both,
    session_of,
    skip_unless_host_builds,
)

from bench import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "wan"
FIRST = "first call, captured"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_each_frame_count_is_its_own_graph_and_replays_exactly(pack, model, standin_graphs):
    check_padded_prompts_batch_cond_and_uncond(
        pack[1], model, FAMILY, frames=(1, 5), shapes=((1, 16, 1, 8, 8), (1, 16, 2, 8, 8))
    )


def test_a_prompt_longer_than_512_tokens_keeps_its_length_and_runs_apart(pack, model, standin_graphs):
    """cfg > 1 with a 600-token prompt against a 512-token negative: ComfyUI cannot batch them
    (their lengths' lcm is far past 4x), so cond and uncond are two batch-1 signatures."""
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    long, negative = synthetic.make_conditioning(FAMILY, 600, seed=7), conds(FAMILY)[1]
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 3, 2.0, long, negative, seed=5, frames=5)
    assert torch.equal(out, eager)
    run = session.last_run
    assert run["calls"] == 6 and run["replayed"] == 4, run
    assert run["eager"] == {f"{FIRST}: 64x64x5f txt600 b1": 1, f"{FIRST}: 64x64x5f txt512 b1": 1}, run


def test_typed_video_warmup_captures_what_the_sampler_sends(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    session = session_of(bcg_model)
    positive, negative = conds(FAMILY)
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64x5", "", "1", positive, negative).args
    assert "64x64x5f txt512 b1: captured" in report and "64x64x5f txt512 b2: captured" in report, report
    assert "NOT exact" not in report and session.runner.stats.captures == 2, report

    for cfg, calls in ((2.0, 3), (1.0, 3)):
        out, eager = sample_both(FAMILY, warmed, model, 64, 64, 3, cfg, positive, negative, seed=9, frames=5)
        assert torch.equal(out, eager)
        assert session.last_run["replayed"] == calls and not session.last_run["eager"], session.last_run

    # A frame count the warm-up did not take falls back and names itself.
    out, eager = sample_both(FAMILY, warmed, model, 64, 64, 2, 2.0, positive, negative, seed=9, frames=9)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {"not captured: 64x64x9f txt512 b2": 2}, session.last_run
    assert session.runner.stats.captures == 2


def test_a_frame_count_off_the_temporal_grid_is_refused_naming_the_fix(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    positive, negative = conds(FAMILY)
    # the node stops with the message on its outputs (ComfyUI's execution blocker, tests/comfy/test_input_errors.py)
    out = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64x4", "", "1", positive, negative)
    assert re.fullmatch(
        r"BCG Warmup Capture: resolutions: '64x64x4' has 4 frames; Wan takes 4k\+1 frames .*use 1 or 5",
        out.block_execution,
    )
    assert session_of(bcg_model).runner.stats.captures == 0


def test_i2v_clip_features_reach_the_dit_as_an_argument_the_key_sees(pack, model, standin_graphs):
    """WanImageToVideo adds ``clip_vision_output`` (and ``concat_latent_image``) to the
    conditioning; ``WAN21.extra_conds`` hands the CLIP features to the DiT as ``clip_fea``
    [B, 257, 1280] (the concat latents become channels of ``x``). The same size and prompt with
    CLIP features is another signature, captured apart and replayed exactly; other feature
    values replay the same graph."""
    from types import SimpleNamespace

    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, _ = conds(FAMILY)

    def with_clip(seed):
        features = torch.randn(1, 257, 1280, generator=torch.Generator().manual_seed(seed))
        return [
            [
                positive[0][0],
                {**positive[0][1], "clip_vision_output": SimpleNamespace(penultimate_hidden_states=features)},
            ]
        ]

    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, positive, positive, seed=3)
    assert torch.equal(out, eager) and session.runner.stats.captures == 1
    for seed, captures in ((1, 2), (2, 2)):
        clip = with_clip(seed)
        out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, clip, clip, seed=3)
        assert torch.equal(out, eager)
        assert session.runner.stats.captures == captures, session.last_run
    assert session.last_run["replayed"] == 2, session.last_run


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"
)
def test_480p_video_is_bit_exact_on_cuda():
    """The real width (dim 5120, 40 heads) at ``gpu_test_depth`` blocks: 832x480 at 33 frames
    (9 latent frames, 14,040 tokens) and 17 frames, cfg 1 and cfg > 1, warmed through the typed
    ``WIDTHxHEIGHTxFRAMES`` plan, replayed bit-equal to eager; an unwarmed frame count names itself.
    Through bcg_runtime.comfy.api (the GPU image has no PyAV for the node shells)."""
    from bcg_runtime.comfy import api
    from bcg_runtime.comfy.hooks import session_of as api_session_of

    skip_unless_host_builds(FAMILY)
    depth = synthetic.family_info(FAMILY).gpu_test_depth
    model = synthetic.load_model(FAMILY, depth=depth, seed=0, device="cuda")
    try:
        positive, negative = conds(FAMILY)
        warmed = api.apply(model, "auto", capture=WARMUP_ONLY)
        report = api.warm_up(warmed, "832x480x33, 832x480x17", "", "1", positive, negative).text()
        print(report)
        assert "NOT exact" not in report and "832x480x33f txt512 b2: captured" in report, report
        session = api_session_of(warmed)
        captures = session.runner.stats.captures
        for frames in (33, 17):
            for cfg in (1.0, 5.0):
                eager = synthetic.sample(model, FAMILY, 832, 480, 2, cfg, positive, negative, seed=7, frames=frames)
                out = synthetic.sample(warmed, FAMILY, 832, 480, 2, cfg, positive, negative, seed=7, frames=frames)
                assert session.last_run["state"] == "replayed", (frames, cfg, session.last_run)
                assert torch.equal(out, eager), (frames, cfg, (out - eager).abs().max().item())
        assert session.runner.stats.captures == captures
        synthetic.sample(warmed, FAMILY, 832, 480, 1, 1.0, positive, negative, seed=8, frames=9)
        assert any("832x480x9f" in reason for reason in session.last_run["eager"]), session.last_run
    finally:
        del model
        release_cuda_memory(unload=True)


def test_fast_mode_is_refused_with_the_fix(pack, model):
    _, nodes = pack
    out = nodes["BCGApply"].execute(model, "fast")
    assert re.fullmatch("BCG Apply: mode: 'fast' is not available for Wan yet.*use 'auto'", out.block_execution)
