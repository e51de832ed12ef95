"""LTX-Video (``LTXV``): the adapter inside real ComfyUI, on a depth-1 LTX-Video-2B-shaped model.

Video latents ``[B, 128, T, H/32, W/32]``; labels count pixel frames. The LTXV T5 pads prompts to
128 tokens with an attention mask, so prompts of up to 128 tokens share one graph (their masks
are inputs read at every replay). ``frame_rate`` is a constant of the call: in the key.
Image-to-video's noise mask gives per-token timesteps; keyframe guides run eager, with the reason.
CPU stand-in here; the host-to-device constant copies the adapter stages (its docstring) exist
on CUDA only: the same tests run on the H200 (``BCG_COMFY_TEST_CPU=0``), with test_full_size_cuda.py.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/ltxv.py``. ``EmptyLTXVLatentVideo``: T = (frames-1)//8 + 1. The T5 tokenizer pads with
``min_length=128``; ``model_base.LTXV`` hands the encoder's ``attention_mask`` to the DiT. ``frame_rate``
(LTXVConditioning, a ``CONDConstant``) reaches the forward as a Python number. Image-to-video (LTXVImgToVideo)
sets a noise mask: ``model_base.LTXV.process_timestep`` turns it into per-token timesteps ``[B, tokens]`` before
the DiT and the mask reaches the DiT as ``denoise_mask``, read only on the keyframe path below. Read for host
syncs and value-dependent branches (comfy/ldm/lightricks/model.py; the forward goes through the DIFFUSION_MODEL
wrapper, ``forward`` -> ``WrapperExecutor`` around ``_forward`` (l.947-972), in both hosts):

- Keyframe guides (LTXVAddGuide: ``keyframe_idxs``), ``_process_input`` l.1119-1171: a boolean
  token mask computed from ``denoise_mask`` *values* (``grid_mask``, l.1131) indexes ``x``,
  ``pixel_coords`` and ``keyframe_idxs`` (data-dependent shapes), ``.item()`` counts each guide's
  surviving tokens (l.1154), and ``_build_guide_self_attention_mask`` branches on
  ``(tracked_weights == 1.0).all()`` (l.1318); ``_prepare_timestep`` (l.867) and
  ``_process_output`` (l.1433) index with the mask again. Refused: a call with ``keyframe_idxs``
  runs eager with ``KEYFRAME_REFUSAL`` (0.8.0 takes that path for any non-None
  ``keyframe_idxs``, so any is refused). Without guides that code is skipped by a shape test.
- ``keyframes_abs_pos_mask`` (l.1186, checkpoints with ``keyframes_abs_pos_embedding`` only): slices
  by Python ints from shapes and the ``generated_keyframes`` dict (constants, in the key).
- ``_prepare_positional_embeddings`` (l.925): ``frame_rate`` is a Python number (in the key).
  With ``frequencies_precision="float64"`` (a checkpoint's metadata config) the frequency grid is
  numpy on the host (``generate_freq_grid_np``, lru-cached) and copied to the device each call.
- Device constants from Python lists: ``latent_to_pixel_coords`` (symmetric_patchifier.py l.28)
  and ``get_latent_coords`` (l.78) call ``torch.tensor(list, device=...)``, and
  ``precompute_freqs_cis`` copies a host-built index grid to the device (``.to(device=...)``,
  model.py l.641/674), as does the float64 grid above: pageable host-to-device copies, which
  capture refuses (seen on the H200, torch 2.11). Their values come from the patch size, the VAE
  scale factors and the RoPE config (the model's config, and shapes in the key), so
  ``stage_host_copies`` stages them through pinned buffers the graph holds
  (``bcg_runtime/core/host_copies.py``); the proof replay would show a value that was not constant.
- ``CrossAttention.forward`` reads ``transformer_options["stg_skip_self_attn"]`` (STG node): an
  entry options.py does not know, so such calls run eager. ``patches_replace`` likewise.
- No other ``.item()``, ``.tolist()``, ``.cpu()``, ``nonzero`` or boolean-mask indexing outside the
  keyframe path, so mode 'full' is safe.
"""

import pytest
import torch
from bcg_testing import WARMUP_ONLY, check_gpu_verification_state, session_of

from bench import synthetic
from bcg_runtime.comfy.models.ltxv import ADAPTER, KEYFRAME_REFUSAL

pytestmark = pytest.mark.comfy
FAMILY = "ltxv"
FIRST = "first call, captured"
W = H = 128  # 4x4 latent cells
FRAMES = 17  # T = 3 latent frames
STEPS = 3


@pytest.fixture(scope="module")
def model():
    """The depth-1 model. ComfyUI 0.8.0's detection has no ``use_keyframes_abs_pos_embedding`` key
    (its LTXV has no keyframe embedding, the recipe's False), so the recipe's detection check would
    refuse it there: on such a host the checkpoint is loaded without that check, and the detected
    class and config (the recipe's, less that key) are checked here instead."""
    import comfy.sd

    sd = synthetic.build_state_dict(FAMILY, depth=1, seed=0, verify=False)
    cls, detected = synthetic.detect_family_class(sd)
    want = synthetic.unet_config(FAMILY, depth=1)
    if "use_keyframes_abs_pos_embedding" in detected:
        del sd
        return synthetic.load_model(FAMILY, depth=1, seed=0)  # with every check of the recipe
    want.pop("use_keyframes_abs_pos_embedding")
    assert (cls, detected) == ("LTXV", want)
    patcher = comfy.sd.load_diffusion_model_state_dict(sd)
    assert type(patcher.model).__name__ == "LTXV" and len(patcher.model.diffusion_model.transformer_blocks) == 1
    return patcher


def conds(lengths=(128, 128), frame_rate=None):
    """Positive and negative as CLIPTextEncode (+ LTXVConditioning's ``frame_rate``) give them."""
    out = []
    for length, seed in zip(lengths, (1, 2)):
        [[context, extras]] = synthetic.make_conditioning(FAMILY, length, seed=seed)
        if frame_rate is not None:
            extras = {**extras, "frame_rate": frame_rate}
        out.append([[context, extras]])
    return out


def sample(m, positive, negative, cfg, seed, frames=FRAMES):
    return synthetic.sample(m, FAMILY, W, H, STEPS, cfg, positive, negative, seed=seed, frames=frames)


def both(bcg_model, model, positive, negative, cfg, seed, frames=FRAMES):
    return sample(bcg_model, positive, negative, cfg, seed, frames), sample(
        model, positive, negative, cfg, seed, frames
    )


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    _, nodes = pack
    positive, negative = conds()
    check_gpu_verification_state(
        nodes, model, FAMILY, monkeypatch, lambda m: sample(m, positive, negative, 3.0, seed=3)
    )


def test_prompts_up_to_128_tokens_share_one_graph_and_replay_exactly(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    assert session.config.mode.value == "full"
    positive, negative = conds()
    out, eager = both(bcg_model, model, positive, negative, 3.0, seed=3)
    assert torch.equal(out, eager), (out - eager).abs().max().item()
    run = session.last_run
    assert run["calls"] == STEPS and run["replayed"] == STEPS - 1, run
    assert run["eager"] == {f"{FIRST}: {W}x{H}x{FRAMES}f txt128 b2": 1}, run

    # Other prompts (other masks, same padded length) and another seed: the same graph, exact.
    other_pos, other_neg = (synthetic.make_conditioning(FAMILY, 128, seed=s) for s in (5, 6))
    assert not torch.equal(other_pos[0][1]["attention_mask"], positive[0][1]["attention_mask"])
    out, eager = both(bcg_model, model, other_pos, other_neg, 3.0, seed=4)
    assert torch.equal(out, eager), (out - eager).abs().max().item()
    assert session.last_run["replayed"] == STEPS and session.runner.stats.captures == 1

    # A prompt longer than 128 tokens keeps its length: its own signature, at cfg 1.
    long = synthetic.make_conditioning(FAMILY, 200, seed=7)
    out, eager = both(bcg_model, model, long, long, 1.0, seed=5)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: {W}x{H}x{FRAMES}f txt200 b1": 1}, session.last_run


def test_frame_rate_is_part_of_the_signature(pack, model, standin_graphs):
    """LTXVConditioning's frame_rate scales the RoPE time axis from Python: a new rate is a new
    graph (a replay of the 25 fps graph at 24 fps would be wrong), exact."""
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    results = {}
    for captures, rate in enumerate((25.0, 24.0), start=1):
        positive, negative = conds(frame_rate=rate)
        out, eager = both(bcg_model, model, positive, negative, 1.0, seed=6)
        assert torch.equal(out, eager), (rate, (out - eager).abs().max().item())
        assert session.runner.stats.captures == captures and session.last_run["replayed"] == STEPS - 1, session.last_run
        results[rate] = eager
    assert not torch.equal(results[25.0], results[24.0])
    positive, negative = conds(frame_rate=25.0)
    out, eager = both(bcg_model, model, positive, negative, 1.0, seed=7)
    assert torch.equal(out, eager) and session.last_run["replayed"] == STEPS and session.runner.stats.captures == 2


def _image_to_video(m, positive, negative, image_latent, seed, cfg=3.0):
    """LTXVImgToVideo's latent: the image's latent in frame 0 of an empty video latent, kept by a
    noise mask of 0 there (strength 1) and 1 elsewhere; sampled as KSampler does with that mask."""
    import comfy.sample

    latent = synthetic.empty_latent(FAMILY, W, H, frames=FRAMES)
    latent[:, :, :1] = image_latent
    mask = torch.ones((1, 1, latent.shape[2], 1, 1))
    mask[:, :, :1] = 0.0
    noise = comfy.sample.prepare_noise(latent, seed)
    return comfy.sample.sample(
        m,
        noise,
        STEPS,
        cfg,
        "euler",
        "simple",
        positive,
        negative,
        latent,
        noise_mask=mask,
        disable_pbar=True,
        seed=seed,
    )


def test_image_to_video_per_token_timesteps_replay_exactly_with_new_images(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, negative = conds()
    sample(bcg_model, positive, negative, 3.0, seed=3)  # text-to-video of the same size: one graph
    assert session.runner.stats.captures == 1

    # The noise mask makes the timestep per token ([B, tokens], not [B]): another signature.
    gen = torch.Generator().manual_seed(8)
    first, second = (torch.randn((1, 128, 1, H // 32, W // 32), generator=gen) for _ in range(2))
    out = _image_to_video(bcg_model, positive, negative, first, seed=3)
    eager_first = _image_to_video(model, positive, negative, first, seed=3)
    assert torch.equal(out, eager_first), (out - eager_first).abs().max().item()
    run = session.last_run
    assert run["eager"] == {f"{FIRST}: {W}x{H}x{FRAMES}f txt128 b2": 1} and run["replayed"] == STEPS - 1, run
    assert session.runner.stats.captures == 2

    # Another image: replayed with no new capture, equal to eager for that image (not the first's).
    out = _image_to_video(bcg_model, positive, negative, second, seed=3)
    eager = _image_to_video(model, positive, negative, second, seed=3)
    assert not torch.equal(eager, eager_first)
    assert torch.equal(out, eager), (out - eager).abs().max().item()
    assert session.last_run["replayed"] == STEPS and session.runner.stats.captures == 2, session.last_run


def test_keyframe_guides_run_eager_with_the_reason(pack, model, standin_graphs):
    """LTXVAddGuide's ``keyframe_idxs`` route the forward through value-dependent token selection:
    eager, named, and equal to stock ComfyUI."""
    assert ADAPTER.refusal({"keyframe_idxs": None}) is None
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    positive, negative = conds()
    # The last latent frame is a guide: its 16 tokens' pixel coordinates (start, end), as the node
    # records them, and a noise mask of 1 (all tokens kept, so the eager forward is well defined).
    tokens = (H // 32) * (W // 32)
    coords = torch.stack(
        torch.meshgrid(torch.tensor([16.0]), torch.arange(H // 32) * 32.0, torch.arange(W // 32) * 32.0, indexing="ij")
    )
    start = coords.reshape(1, 3, tokens)
    keyframe_idxs = torch.stack((start, start + torch.tensor([1.0, 32.0, 32.0]).view(1, 3, 1)), dim=-1)
    positive, negative = ([[c, {**e, "keyframe_idxs": keyframe_idxs}]] for [[c, e]] in (positive, negative))
    latent = synthetic.empty_latent(FAMILY, W, H, frames=FRAMES)
    mask = torch.ones((1, 1, latent.shape[2], 1, 1))

    def run(m):
        import comfy.sample

        noise = comfy.sample.prepare_noise(latent, 3)
        return comfy.sample.sample(
            m,
            noise,
            STEPS,
            1.0,
            "euler",
            "simple",
            positive,
            negative,
            latent,
            noise_mask=mask,
            disable_pbar=True,
            seed=3,
        )

    assert torch.equal(run(bcg_model), run(model))
    assert session_of(bcg_model).last_run["eager"] == {KEYFRAME_REFUSAL: STEPS}, session_of(bcg_model).last_run


def test_an_unwarmed_length_falls_back_with_its_label(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    positive, negative = conds()
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, f"{W}x{H}x{FRAMES}", "", "1", positive, None).args
    assert f"{W}x{H}x{FRAMES}f txt128 b1: captured" in report and "NOT exact" not in report, report
    session = session_of(warmed)
    out, eager = both(warmed, model, positive, negative, 1.0, seed=3)
    assert torch.equal(out, eager) and session.last_run["replayed"] == STEPS, session.last_run
    out, eager = both(warmed, model, positive, negative, 1.0, seed=3, frames=25)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"not captured: {W}x{H}x25f txt128 b1": STEPS}, session.last_run
