"""LTX-2 / LTX-2.3 (``LTXAV``): the adapter inside real ComfyUI, on depth-1 models of the real width.

The joint latent (video ``[B, 128, T, H/32, W/32]`` + audio ``[B, 8, A, 16]``, as LTXVConcatAVLatent
makes it) is sampled through ``comfy.sample.sample``; ``synthetic.sample`` returns it packed (both
streams in one tensor), so ``torch.equal`` compares video and audio. Most tests send the context
the DiT receives after its embeddings connectors (``[B, L, 7680]``, what LTX-2's compat-mode text
encoder returns) at a short length, since the connectors at 1024 tokens take a minute a sampling
run on this CPU; one test goes through them (the Gemma path, ``unprocessed_ltxav_embeds``). CPU
stand-in here; ``test_768x512x121_with_audio_is_bit_exact_on_cuda`` and test_full_size_cuda.py run
the real width and depth on the H200 (``BCG_GPU_FAMILIES="ltxav ltxav23"``).

Source audit (ComfyUI 0.33.0): host syncs and value-dependent branches (ComfyUI 0.33.0, comfy/ldm/lightricks/av_model.py
and the LTXVModel code it inherits, model.py; the DIFFUSION_MODEL wrapper around ``_forward``,
model.py l.947-972, in both hosts):

- ``_process_input`` l.691-697: with a ``denoise_mask`` (image-to-video, inpainting, any noise mask
  of the joint latent: ``LTXVConcatAVLatent`` gives the video one as soon as either stream has one)
  the forward compares ``frame_mask.min() != frame_mask.max()`` per latent frame in Python, a host
  read of the mask's values deciding ``has_spatial_mask``; a graph cannot replay it. Refused:
  :data:`DENOISE_MASK_REFUSAL` (0.8.0's LTXAV has no such read, the call is kept eager there too:
  one rule). ``audio_denoise_mask`` is read only by ``process_timestep`` before the DiT.
- ``_process_input`` l.706-730, ID-LoRA reference audio (``ref_audio``, a ``CONDConstant``):
  ``ref_end[-1].item()`` (l.723), a device read on the host. Refused: :data:`REF_AUDIO_REFUSAL`.
- Keyframe guides (``keyframe_idxs``), the inherited LTXV path (model.py l.1119-1171): value-
  selected tokens and ``.item()`` counts; refused with LTX-Video's :data:`.ltxv.KEYFRAME_REFUSAL`.
- ``CompressedTimestep`` (l.27) and ``_prepare_timestep`` (l.738): ``per_frame_path`` and the
  compression test read shapes only; ``a_timestep_scaled.max()`` stays on the device.
- ``BasicAVTransformerBlock.forward`` (l.260): ``ax.numel() > 0`` is a shape; ``run_vx``, ``run_ax``,
  ``a2v_cross_attn``, ``v2a_cross_attn`` and ``stg_self_attn_blocks`` are ``transformer_options``
  entries (LTXVModalityGuidance, STG's post-CFG passes) that options.py does not know: such calls
  run eager with that reason. ``comfy.model_management.in_training`` is a process flag.
- Device constants from the host: ``latent_to_pixel_coords`` / ``get_latent_coords``
  (``torch.tensor(list, device=...)``, symmetric_patchifier.py l.28/78), the RoPE index grid, and
  with ``frequencies_precision="float64"`` (LTX-2.3's metadata) the numpy frequency grid
  (model.py l.626) copied to the device every call: pageable copies capture refuses. Their values
  come from the patch size, the VAE scale factors, the audio patchifier's constants and the RoPE
  config (the model's config and shapes in the key), so ``stage_host_copies`` stages them through
  pinned buffers the graph holds (``bcg_runtime/core/host_copies.py``); the proof replay would show
  a value that was not constant.
- No other ``.item()``, ``.tolist()``, ``.cpu()``, ``nonzero`` or boolean-mask indexing outside
  the refused paths, so mode 'full' is safe.
"""

import inspect

import pytest
import torch
from bcg_testing import (
    WARMUP_ONLY,
    check_gpu_verification_state,
    release_cuda_memory,
    session_of,
    skip_unless_host_builds,
)

from bench import synthetic
from bcg_runtime.comfy.models.ltxav import ADAPTER, DENOISE_MASK_REFUSAL, REF_AUDIO_REFUSAL
from bcg_runtime.comfy.models.ltxv import KEYFRAME_REFUSAL

pytestmark = pytest.mark.comfy
FAMILY = "ltxav"
FIRST = "first call, captured"
STEPS = 3
PROCESSED = {"ltxav": 7680, "ltxav23": 6144}  # the context width after the connectors


@pytest.fixture(scope="module")
def model():
    """The depth-1 LTX-2 (one block, one layer per embeddings connector, real width)."""
    from comfy.ldm.lightricks.av_model import LTXAVModel

    if not hasattr(LTXAVModel, "preprocess_text_embeds"):
        pytest.skip("this ComfyUI's LTXAV DiT has no embeddings connectors (ComfyUI 0.8.0 runs them in the text "
                    "encoder), so the recipe's layout, which counts connector layers, is 0.33.0's")  # fmt: skip
    skip_unless_host_builds(FAMILY)
    return synthetic.load_model(FAMILY, depth=1, seed=0)


def processed(family, length, seed):
    """A conditioning as the DiT's connectors leave it (no ``unprocessed_ltxav_embeds`` flag)."""
    context = torch.randn(1, length, PROCESSED[family], generator=torch.Generator().manual_seed(seed))
    return [[context, {"pooled_output": None}]]


def conds(family=FAMILY, length=32):
    return processed(family, length, 1), processed(family, length, 2)


def sample(m, positive, negative, cfg, seed, frames=9, family=FAMILY, latent=None, steps=STEPS):
    return synthetic.sample(m, family, 64, 64, steps, cfg, positive, negative, seed=seed, frames=frames, latent=latent)


def both(bcg_model, model, *args, **kwargs):
    return sample(bcg_model, *args, **kwargs), sample(model, *args, **kwargs)


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    positive, negative = conds()
    check_gpu_verification_state(
        pack[1], model, FAMILY, monkeypatch, lambda m: sample(m, positive, negative, 2.0, seed=3, steps=2)
    )


def test_audio_and_video_replay_exactly_and_each_shape_of_either_stream_is_its_own_graph(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    assert session.config.mode.value == "full"
    positive, negative = conds()

    # 9 pixel frames: 2 latent frames of video, 9 audio latents; cond and uncond batched.
    out, eager = both(bcg_model, model, positive, negative, 2.0, seed=3)
    assert out.shape == (1, 1, 128 * 2 * 2 * 2 + 8 * 9 * 16), out.shape  # both streams, packed
    assert torch.equal(out, eager), (out - eager).abs().max().item()
    run = session.last_run
    assert run["calls"] == STEPS and run["replayed"] == STEPS - 1, run
    assert run["eager"] == {f"{FIRST}: 64x64x9f a9 txt32 b2": 1}, run

    # Another prompt pair and seed: the same graph, exact (the audio half too).
    other_pos, other_neg = processed(FAMILY, 32, 5), processed(FAMILY, 32, 6)
    out, eager = both(bcg_model, model, other_pos, other_neg, 2.0, seed=4)
    assert torch.equal(out, eager) and session.last_run["replayed"] == STEPS and session.runner.stats.captures == 1

    # 17 frames: more video frames and more audio latents, a new signature.
    out, eager = both(bcg_model, model, positive, negative, 2.0, seed=3, frames=17)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64x17f a17 txt32 b2": 1}, session.last_run

    # Video only (no audio stream): the DiT gets [video] and an empty audio stream, its own graph.
    video = synthetic.empty_latent(FAMILY, 64, 64, frames=9)
    out, eager = both(bcg_model, model, positive, negative, 2.0, seed=3, latent=video)
    assert out.shape == video.shape and torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64x9f a0 txt32 b2": 1}, session.last_run
    assert session.runner.stats.captures == 3


def test_prompts_through_the_connectors_reach_the_dit_as_1024_tokens_and_batch(pack, model, standin_graphs):
    """The Gemma path: 40- and 17-token prompts flagged ``unprocessed_ltxav_embeds``; the DiT's
    connectors (in extra_conds, outside the call) pad both to 1024 with learned registers, so cond
    and uncond batch into one 1024-token call, captured and replayed exactly."""
    assert ADAPTER.text_length_seen(40) == 1024 and ADAPTER.text_length_seen(1024) == 1024
    assert ADAPTER.text_length_seen(1030) == 1152  # whole tiles of the 128 registers past 1024
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, negative = (synthetic.make_conditioning(FAMILY, n, seed=s) for n, s in zip((40, 17), (1, 2)))
    assert positive[0][1]["unprocessed_ltxav_embeds"] and positive[0][0].shape == (1, 40, 3840)
    out, eager = both(bcg_model, model, positive, negative, 2.0, seed=3, steps=2)
    assert torch.equal(out, eager), (out - eager).abs().max().item()
    run = session.last_run
    assert run["eager"] == {f"{FIRST}: 64x64x9f a9 txt1024 b2": 1} and run["replayed"] == 1, run


def test_noise_masks_reference_audio_and_keyframes_run_eager_with_the_reason(pack, model, standin_graphs):
    """A noise mask on the joint latent (LTXVConcatAVLatent gives the video one when either stream
    has one): the forward reads the mask's values on the host, so every call runs eager, named,
    equal to stock ComfyUI. Reference audio and keyframe guides are refused by name as well."""
    import comfy.nested_tensor
    import comfy.sample

    assert ADAPTER.refusal({"ref_audio": {"tokens": torch.zeros(1, 4, 128)}}) == REF_AUDIO_REFUSAL
    assert ADAPTER.refusal({"keyframe_idxs": torch.zeros(1, 3, 16, 2)}) == KEYFRAME_REFUSAL
    assert ADAPTER.refusal({"denoise_mask": None, "ref_audio": None, "keyframe_idxs": None}) is None
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    positive, negative = conds()
    video = synthetic.empty_latent(FAMILY, 64, 64, frames=9)
    video[:, :, :1] = torch.randn(video[:, :, :1].shape, generator=torch.Generator().manual_seed(8))
    audio = torch.zeros(synthetic.family_info(FAMILY).second_stream_shape(None, 1, 9))
    video_mask = torch.ones((1, 1, video.shape[2], 1, 1))
    video_mask[:, :, :1] = 0.0  # image-to-video: keep the first frame
    latent = comfy.nested_tensor.NestedTensor((video, audio))
    mask = comfy.nested_tensor.NestedTensor((video_mask, torch.ones_like(audio)))

    def run(m):
        noise = comfy.sample.prepare_noise(latent, 3)
        out = comfy.sample.sample(
            m, noise, 2, 2.0, "euler", "simple", positive, negative, latent, noise_mask=mask, disable_pbar=True, seed=3
        )
        return torch.cat([t.flatten() for t in out.unbind()])

    assert torch.equal(run(bcg_model), run(model))
    last = session_of(bcg_model).last_run
    assert last["eager"] == {DENOISE_MASK_REFUSAL: 2} and last["replayed"] == 0, last


def test_typed_video_warmup_samples_the_joint_latent(pack, model, standin_graphs):
    """BCG Warmup Capture's ``64x64x9``: the warm-up samples the family's joint latent (audio at
    25 fps beside the video), so what a KSampler on LTXVConcatAVLatent sends replays at once."""
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    positive, negative = conds()
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64x9", "", "1", positive, None).args
    assert "64x64x9f a9 txt32 b1: captured" in report and "NOT exact" not in report, report
    session = session_of(warmed)
    out, eager = both(warmed, model, positive, positive, 1.0, seed=3)
    assert torch.equal(out, eager) and session.last_run["replayed"] == STEPS, session.last_run


def _host_has_ltx23():
    from comfy.ldm.lightricks import model as ltx

    return "cross_attention_adaln" in inspect.signature(ltx.LTXBaseModel.__init__).parameters


@pytest.fixture(scope="module")
def model23():
    if not _host_has_ltx23():
        pytest.skip("this ComfyUI's LTXAVModel has no LTX-2.3 options (cross_attention_adaln, gated attention, caption "
                    "projection before the connectors: ComfyUI 0.8.0 takes them as unknown keywords and builds LTX-2)")  # fmt: skip
    skip_unless_host_builds("ltxav23")
    return synthetic.load_model("ltxav23", depth=1, seed=0)


def test_ltx23_layout_replays_exactly_with_audio(pack, model23, standin_graphs):
    """LTX-2.3's metadata config (cross-attention AdaLN, gated attention, float64 RoPE grid, causal
    positions): built as detected, captured once, replayed bit-equal to eager for a new prompt."""
    dm = model23.model.diffusion_model
    assert dm.cross_attention_adaln and dm.apply_gated_attention and dm.caption_proj_before_connector
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model23, "auto").args
    session = session_of(bcg_model)
    assert session.adapter.text_dim == 6144
    positive, negative = conds("ltxav23")
    out, eager = both(bcg_model, model23, positive, negative, 2.0, seed=3, family="ltxav23")
    assert torch.equal(out, eager), (out - eager).abs().max().item()
    assert session.last_run["eager"] == {f"{FIRST}: 64x64x9f a9 txt32 b2": 1}, session.last_run
    other = processed("ltxav23", 32, 5), processed("ltxav23", 32, 6)
    out, eager = both(bcg_model, model23, *other, 2.0, seed=4, family="ltxav23")
    assert torch.equal(out, eager) and session.last_run["replayed"] == STEPS and session.runner.stats.captures == 1


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"
)
@pytest.mark.parametrize("family", ["ltxav", "ltxav23"])
def test_768x512x121_with_audio_is_bit_exact_on_cuda(family):
    """LTX-2's usual size at the real width and ``gpu_test_depth``: 768x512 at 121 frames with 121
    audio latents (6,144 video tokens), prompts through the connectors (1024 tokens), cfg 1 and
    cfg > 1, warmed through the typed plan, replayed bit-equal to eager; 97 frames falls back
    naming itself. Through bcg_runtime.comfy.api (the GPU image has no PyAV for the node shells)."""
    from bcg_testing import conds as family_conds

    from bcg_runtime.comfy import api
    from bcg_runtime.comfy.hooks import session_of as api_session_of

    from comfy.ldm.lightricks.av_model import LTXAVModel

    if not hasattr(LTXAVModel, "preprocess_text_embeds"):
        pytest.skip("this ComfyUI's LTXAV DiT has no embeddings connectors (0.8.0): the recipes are 0.33.0's")
    if family == "ltxav23" and not _host_has_ltx23():
        pytest.skip("this ComfyUI has no LTX-2.3 layout")
    skip_unless_host_builds(family)
    model = synthetic.load_model(family, depth=synthetic.family_info(family).gpu_test_depth, seed=0, device="cuda")
    try:
        positive, negative = family_conds(family)
        warmed = api.apply(model, "auto", capture=WARMUP_ONLY)
        report = api.warm_up(warmed, "768x512x121", "", "1", positive, negative).text()
        print(report)
        assert "NOT exact" not in report and "768x512x121f a121 txt1024 b2: captured" in report, report
        session = api_session_of(warmed)
        captures = session.runner.stats.captures
        for cfg in (1.0, 4.0):
            eager = synthetic.sample(model, family, 768, 512, 2, cfg, positive, negative, seed=7, frames=121)
            out = synthetic.sample(warmed, family, 768, 512, 2, cfg, positive, negative, seed=7, frames=121)
            assert session.last_run["state"] == "replayed", (cfg, session.last_run)
            assert torch.equal(out, eager), (cfg, (out - eager).abs().max().item())
        assert session.runner.stats.captures == captures
        synthetic.sample(warmed, family, 768, 512, 1, 1.0, positive, negative, seed=8, frames=97)
        assert any("768x512x97f" in reason for reason in session.last_run["eager"]), session.last_run
    finally:
        del model
        release_cuda_memory(unload=True)
