"""HunyuanVideo 1.0 (``HunyuanVideo``, ``HunyuanVideoI2V``, ``HunyuanVideoSkyreelsI2V``), the
HunyuanImage 2.1 refiner (``HunyuanImage21Refiner``) and HunyuanVideo 1.5 SR
(``HunyuanVideo15_SR_Distilled``) inside real ComfyUI: the HunyuanVideo forward, each class on
its depth-1 model at the real width (one double and one single block; 1.5 SR: one double block),
through ``comfy.sample.sample`` with the inputs its nodes add.

For each input (the I2V start image and mask as channels of ``x``, the first-frame guidance and
the reference latent of ``HunyuanImageToVideo``, SkyReels' image channels, the refiner's image to
refine, the SR condition): the first call is captured and the second replayed, bit-equal to eager;
other values replay the same graph, bit-equal to eager, and change eager's output (read live); an
input outside ``x`` (the first-frame guidance index) is another signature; T2V takes a reference
latent (``HunyuanImageToVideo``'s "custom" guidance; its tokens through the 16-channel ``img_in``).
The text policy is HunyuanVideo 1.5's (exact length), tested in test_hunyuan_video15.py. The refiner carries ``time_r_in`` and is served (ComfyUI sends
``disable_time_r=True``); an SR checkpoint with ``time_r_in`` runs eager with the reason. 64x64 px,
5 frames for video (2 latent frames), bf16, CPU stand-in. Every class exists in 0.8.0 and 0.33.0.
On the H200 ``test_the_inputs_are_bit_exact_on_cuda`` runs the same input checks at the real width
and ``gpu_test_depth`` (848x480 x 17 frames; the refiner 1024x1024), and test_full_size_cuda.py
picks each recipe up by itself.

Source audit (ComfyUI 0.33.0):

hunyuan_video (``bcg_runtime/comfy/models/hunyuan_video.py``, also serving ``hunyuan_video_i2v`` and
``hunyuan_video_skyreels_i2v``). The 13B DiT: hidden 3072, 24 heads of 128, 20 double- and 40 single-stream
blocks, a 1x2x2 patch over 16-channel latents at 8x spatial and 4x temporal (``EmptyHunyuanLatentVideo``: T =
(frames-1)//4 + 1), 3-D RoPE (``axes_dim`` [16, 56, 56]), a LLaVA-LLaMA-3 context (4096), a pooled CLIP-L vector
(``vector_in``, 768) and a guidance embedding (``guidance_in``: the guidance-distilled checkpoints, FluxGuidance
6.0 with cfg 1). The forward is read line by line in test_hunyuan_video15.py's audit (``hunyuan_video15.py``);
detection turns ``meanflow`` on only for a ``time_r_in`` key. ``HunyuanVideoTokenizer`` crops the LLaMA template
and keeps the exact token count (``min_length=1``); the encoder drops an all-ones mask
(``comfy/text_encoders/hunyuan_video.py:144-145``). A mask (a padded batch of prompts) is passed by
``model_base.HunyuanVideo.extra_conds`` (model_base.py:1371): a tensor argument, shape in the key, values copied
at replay. ``pooled_output`` reaches the DiT as ``y``, ``guidance`` (6.0 unless FluxGuidance sets it) as a
tensor: their values are copied at replay. Image-to-video, each an input the key sees
(``comfy_extras/nodes_hunyuan.py:313-359``, ``HunyuanImageToVideo``):

- ``HunyuanVideoI2V`` (in_channels 33): ``concat_keys`` ``("concat_image", "mask_inverted")``
  (model_base.py:1396-1402): the start image's latent (``concat_latent_image``, else the input
  latent) and the inverted mask (``concat_mask``, else the latent's ``noise_mask``) are channels
  of ``x``, built before the call; guidance "v2 (replace)" instead sends ``guiding_frame_index``
  (a tensor: the first frame's modulation, ``model.py:331-341``, whose token split is a Python int
  from shapes) with the image in the latent and a noise mask; "custom" sends ``ref_latent``
  (tokens prepended through ``img_in``, ``model.py:323-329``, ids from shapes; only a model whose
  ``img_in`` takes the 16 latent channels, the T2V layout, runs it: stock ComfyUI fails on the 33-
  channel I2V one). Presence and shapes are in the key, values are copied at replay.
- ``HunyuanVideoSkyreelsI2V`` (in_channels 32): ``concat_keys`` ``("concat_image",)``
  (model_base.py:1404-1410): the image latent alone as channels of ``x``.
- The forward goes through the DIFFUSION_MODEL wrapper (``HunyuanVideo.forward`` ->
  ``WrapperExecutor`` around ``_forward``, 0.33.0 model.py:481, 0.8.0 model.py:480).

hunyuan_image21_refiner (``bcg_runtime/comfy/models/hunyuan_image21_refiner.py``). The refiner DiT: hidden 3328,
26 heads of 128, 20 double- and 40 single-stream blocks, a 1x1x1 patch, 3-D RoPE (``axes_dim`` [16, 56, 56]),
Qwen2.5-VL-7B context (3584), a guidance embedding and ``time_r_in`` (meanflow), no pooled vector
(comfy/supported_models.py:2071-2085). What the class adds (comfy/model_base.py:2604-2630):

- ``disable_time_r`` is always True (a ``CONDConstant``, l.2629): the meanflow branch with its
  ``torch.where`` over the schedule (hunyuan_video/model.py:315-321) never runs, so the refiner is
  served although it carries ``time_r_in`` (a call without the flag would run eager, as for the
  distilled base checkpoint).
- ``concat_cond`` (l.2605-2626): the image to refine (``HunyuanRefinerLatent``'s
  ``concat_latent_image``, 32 channels of the refiner VAE at 16x, packed two frames per 64
  channels by ``latent_formats.HunyuanImage21Refiner.process_in``) scaled by 0.75 or mixed with
  seeded noise (``noise_augmentation``), zeros without one: 64 channels of ``x`` beside the 64 of
  the latent, built before the call (shapes in the key, values copied at replay).

hunyuan_video15_sr (``bcg_runtime/comfy/models/hunyuan_video15_sr.py``): what the class adds
(comfy/model_base.py:2692-2721):

- ``concat_cond`` (l.2696-2716): 66 channels of ``x`` beside the 32 of the latent, from the
  ``concat_latent_image`` the SR node builds (the low-resolution video's latent upscaled, its
  slice ``[33:65]`` scaled by 0.75 or mixed with seeded noise by ``noise_augmentation``), zeros
  without one; built before the call (shapes in the key, values copied at replay).
- ``disable_time_r`` False (a ``CONDConstant``, l.2720): a checkpoint with ``time_r_in`` (a
  meanflow distillation) then takes the ``torch.where`` over the sampler's schedule
  (hunyuan_video/model.py:315-321) on every call, which ``MEANFLOW_REFUSAL`` sends eager (the
  adapter reads ``time_r_in`` from the loaded model).
"""

import os

import pytest
import torch
from bcg_testing import (
    OneModelAtATime,
    check_gpu_verification_state,
    check_inputs_are_read_live,
    conds,
    release_cuda_memory,
    session_of,
    skip_unless_host_builds,
)

from bench import synthetic

pytestmark = pytest.mark.comfy


def _randn(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _first_frame_given(T, H, W):
    """HunyuanImageToVideo's mask: zeros on the start image's latent frame, ones after."""
    mask = torch.ones(1, 1, T, H, W)
    mask[:, :, :1] = 0.0
    return mask


def _sr_condition(seed, T, H, W):
    """HunyuanVideo15SuperResolution's ``concat_latent_image``: 66 channels, the low-resolution
    latent at [33:65] and a ones channel at 65 (no start image)."""
    cond = torch.zeros(1, 66, T, H, W)
    cond[:, 33:65] = _randn(seed, 1, 32, T, H, W)
    cond[:, 65] = 1.0
    return cond


def make_cases(width=64, height=64, frames=5):
    """family -> [(what, check_inputs_are_read_live keyword arguments)] at ``width`` x ``height``
    px and ``frames`` pixel frames (the refiner: an image)."""
    T, H, W = (frames - 1) // 4 + 1, height // 8, width // 8
    h, w = height // 16, width // 16
    video = {"frames": frames, "width": width, "height": height}
    image = {"width": width, "height": height}

    def concat(seed):
        return {
            "concat_latent_image": _randn(seed, 1, 16, T, H, W),
            "concat_mask": _first_frame_given(T, H, W),
        }

    return {
        "hunyuan_video": [
            (
                "custom: ref_latent (reference tokens)",
                {**video, "inputs": lambda seed: {"ref_latent": _randn(seed, 1, 16, 1, H, W)}},
            ),
        ],
        "hunyuan_video_i2v": [
            (
                "v1 (concat): start image and mask as channels; v2 (replace): guiding_frame_index, another signature",
                {
                    **video,
                    "inputs": concat,
                    "other": {"guiding_frame_index": 0},
                },
            ),
        ],
        "hunyuan_video_skyreels_i2v": [
            (
                "start image as channels",
                {
                    **video,
                    "inputs": lambda seed: {"concat_latent_image": _randn(seed, 1, 16, T, H, W)},
                    "other": {},
                    "other_is_new": False,
                },
            ),
        ],
        "hunyuan_image21_refiner": [
            (
                "the image to refine as channels (noise augmentation 0.1)",
                {
                    **image,
                    "inputs": lambda seed: {
                        "concat_latent_image": _randn(seed, 1, 32, 1, h, w),
                        "noise_augmentation": 0.1,
                    },
                    "other": {},
                    "other_is_new": False,
                },
            ),
        ],
        "hunyuan_video15_sr": [
            (
                "the SR condition as channels",
                {
                    **video,
                    "inputs": lambda seed: {
                        "concat_latent_image": _sr_condition(seed, T, h, w),
                        "noise_augmentation": 0.0,
                    },
                    "other": {},
                    "other_is_new": False,
                },
            ),
        ],
    }


CASES = [(family, what) for family, cases in make_cases().items() for what, _ in cases]


@pytest.fixture(scope="module")
def models():
    held = OneModelAtATime()
    yield held
    held.release()


def test_hunyuan_video_stays_off_until_its_gpu_test_passed(pack, models, standin_graphs, monkeypatch):
    """The three 1.0 classes share one adapter, off until the lead's H200 run; so are the refiner's
    and SR's (the same code path; T2V here)."""
    check_gpu_verification_state(pack[1], models.get("hunyuan_video"), "hunyuan_video", monkeypatch)


@pytest.mark.parametrize("family, what", CASES, ids=[f"{f}: {w.split(':')[0]}" for f, w in CASES])
def test_the_inputs_replay_exactly_and_are_read_live(pack, models, standin_graphs, family, what):
    model = models.get(family)
    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    check_inputs_are_read_live(family, model, bcg_model, **dict(make_cases()[family])[what])


def test_the_refiner_carries_time_r_in_and_is_served(pack, models, standin_graphs):
    """The refiner's checkpoint has ``time_r_in`` (meanflow); ComfyUI sends ``disable_time_r=True``
    for the class, so no call takes the schedule lookup and every call is served."""
    model = models.get("hunyuan_image21_refiner")
    assert model.model.diffusion_model.time_r_in is not None
    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    positive, negative = conds("hunyuan_image21_refiner")
    out = synthetic.sample(bcg_model, "hunyuan_image21_refiner", 64, 64, 2, 2.0, positive, negative, seed=3)
    assert torch.equal(
        out, synthetic.sample(model, "hunyuan_image21_refiner", 64, 64, 2, 2.0, positive, negative, seed=3)
    )
    run = session_of(bcg_model).last_run
    assert run["replayed"] == 2 and set(run["eager"]) == {
        "first call, captured: 64x64 txt40 b1",
        "first call, captured: 64x64 txt17 b1",
    }, run


def test_an_sr_checkpoint_with_time_r_in_runs_eager_and_says_why(pack, models, standin_graphs, monkeypatch):
    """ComfyUI sends ``disable_time_r=False`` for the SR class: a checkpoint with ``time_r_in``
    looks the next sigma up in the sampler's schedule with a one-argument ``torch.where``
    (model.py l.316), which a graph would freeze. BCG Apply reads ``time_r_in`` from the model
    and sends every such call eager."""
    import comfy.ops
    from comfy.ldm.flux.layers import MLPEmbedder

    family = "hunyuan_video15_sr"
    model = models.get(family)
    dm = model.model.diffusion_model
    # manual_cast: cast to the compute dtype per call, as ComfyUI's ops of this bf16 model do on the CPU
    time_r_in = MLPEmbedder(256, 2048, dtype=torch.float32, operations=comfy.ops.manual_cast)
    with torch.no_grad():
        for p in time_r_in.parameters():
            p.normal_(0.0, 0.02, generator=torch.Generator().manual_seed(11))
    positive, negative = conds(family)
    plain = synthetic.sample(model, family, 64, 64, 2, 1.0, positive, negative, seed=3, frames=5)
    weight = next(dm.parameters())
    monkeypatch.setattr(dm, "time_r_in", time_r_in.to(device=weight.device, dtype=weight.dtype))
    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    out = synthetic.sample(bcg_model, family, 64, 64, 2, 1.0, positive, negative, seed=3, frames=5)
    eager = synthetic.sample(model, family, 64, 64, 2, 1.0, positive, negative, seed=3, frames=5)
    assert torch.equal(out, eager) and not torch.equal(eager, plain)  # the r-timestep changes the math
    run = session_of(bcg_model).last_run
    [(reason, n)] = run["eager"].items()
    assert n == 2 and "SR meanflow" in reason and "disable_time_r=False" in reason, run
    assert session_of(bcg_model).runner.stats.captures == 0


GPU_CASES = [(f, w) for f, w in CASES if f in (os.environ.get("BCG_GPU_FAMILIES", "").split() or [f])]


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"
)
@pytest.mark.parametrize("family, what", GPU_CASES, ids=[f"{f}: {w.split(':')[0]}" for f, w in GPU_CASES])
def test_the_inputs_are_bit_exact_on_cuda(family, what):
    """The real width at the recipe's ``gpu_test_depth``, 848x480 at 17 frames (the refiner
    1024x1024), the same checks as the CPU test, through bcg_runtime.comfy.api (the GPU image has
    no PyAV for the node shells). ``BCG_GPU_FAMILIES`` picks families."""
    from bcg_runtime.comfy import api

    skip_unless_host_builds(family)
    size = (
        {"width": 1024, "height": 1024}
        if family == "hunyuan_image21_refiner"
        else {"width": 848, "height": 480, "frames": 17}
    )
    model = synthetic.load_model(family, depth=synthetic.family_info(family).gpu_test_depth, seed=0, device="cuda")
    try:
        bcg_model = api.apply(model, "auto")
        check_inputs_are_read_live(family, model, bcg_model, **dict(make_cases(**size)[family])[what])
    finally:
        del model
        release_cuda_memory(unload=True)
