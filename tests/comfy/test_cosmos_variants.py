"""Cosmos 1.0 (``CosmosT2V``, ``CosmosI2V``: ``GeneralDIT``), Cosmos-Predict2 Video2World
(``CosmosI2VPredict2``) and Anima (``Anima``: Cosmos-Predict2's DiT behind a text adapter) inside
real ComfyUI, each on its depth-1 model at the real width (one block), bf16, CPU stand-in, 64x64 px.

- Cosmos 1.0: the T5 tokenizer pads prompts to 512 tokens, so cond and uncond batch into one call
  (``txt512 b2``); a Python frame rate is a constant of the key (another rate is another graph,
  the RoPE scales time by it), a tensor one runs eager with the reason. Latents are 8x temporal:
  9 frames are 2 latent frames.
- Video2World (Cosmos 1.0 and Predict2): the start frame is in the sampler's latent and the noise
  mask is a channel of ``x`` (Predict2 also turns it into per-frame timesteps): new frames and
  masks replay the first graph, read live, bit-equal to eager.
- Anima (0.33.0 only: 0.8.0 has no such class, skipped there): prompts of 40 and 17 tokens reach
  the DiT as 512 rows; under ``torch.inference_mode`` (ComfyUI's execution) the text adapter runs
  before sampling and cond and uncond batch (``txt512 b2``), outside it ``Anima.forward`` runs it
  on each call before BCG's hook (two ``txt512 b1`` calls, one graph); the T5 ids are read live.

On the H200 ``test_the_video2world_inputs_are_bit_exact_on_cuda`` runs the input checks at the real
width and ``gpu_test_depth`` (832x480, 3 latent frames: 9 Predict2 / 17 Cosmos 1.0 frames), and
test_full_size_cuda.py picks every recipe up by itself.

Source audit (ComfyUI 0.33.0):

cosmos (``bcg_runtime/comfy/models/cosmos.py``). The 7B checkpoints (Cosmos-1.0-Diffusion-7B-Text2World /
-Video2World): 28 blocks of 4096 (32 heads of 128), each a full-attention, a cross-attention (T5-XXL, 1024) and
an MLP sub-block with AdaLN-LoRA (256), 3-D RoPE with fps modulation, a learnable per-block absolute position
embedding (``extra_pos_embedder``), blocks in ``THWBD`` layout, a padding-mask channel concatenated inside the
forward; the 14B ones are 36 blocks of 5120. ``EmptyCosmosLatentVideo``: T = (frames-1)//8 + 1. Detection fixes
the block count by width (comfy/model_detection.py:505-525). Video2World (``CosmosI2V``, 17 channels) adds the
inverted noise mask as a channel of ``x`` (``concat_keys`` ``("mask_inverted",)``, model_base.py:1416-1417); the
start frames are in the latent itself (``CosmosImageToVideoLatent`` with a ``noise_mask``). The T5 tokenizer pads
with ``min_length=512`` (comfy/text_encoders/cosmos.py:25; the encoder zeroes the padding rows); its
``attention_mask`` reaches the DiT (model_base.py:1421-1423) and is unused there (``use_cross_attn_mask`` is
False in every detected config). Read for host syncs and value-dependent branches (comfy/ldm/cosmos/):

- ``position_embedding.py:137`` ``fps.min() == fps.max()`` would sync for a tensor ``fps``.
  ``model_base.CosmosVideo`` sends ``fps`` as a ``CONDConstant`` of the conditioning's
  ``frame_rate`` (model_base.py:1428): None without one, else a Python number, in the key like
  every plain argument (``:145-148`` scale the temporal positions by it). A tensor ``fps`` is
  refused (``TENSOR_FPS_REFUSAL``), as for Cosmos-Predict2.
- ``model.py:389-394`` the cross-attention mask is None (``use_cross_attn_mask`` False), so
  ``model.py:404`` ``if crossattn_mask:`` never tests a tensor; ``model.py:396``
  ``x_format`` is a fixed config.
- ``model.py:282-290`` the padding mask: ``model_base`` never passes one, so it is zeros built from
  shapes; ``position_embedding.py:193-207`` crops the learnable tables by shapes.
- ``model.py:377``: ``affline_scale_log_info`` is a local dict (unlike Cosmos-Predict2, this
  forward stores nothing on the module). ``blocks.py:285`` builds the timestep frequencies on the
  device from the config.
- No op syncs with the host, so mode 'full' is safe. ``GeneralDIT.forward`` runs ``_forward`` through
  the DIFFUSION_MODEL ``WrapperExecutor`` in both hosts (0.33.0 model.py:423-441).

cosmos_predict2_i2v (``bcg_runtime/comfy/models/cosmos_predict2_i2v.py``): what the class adds to
Cosmos-Predict2's forward (comfy/supported_models.py:1163-1171, comfy/model_base.py:1439-1465):

- ``concat_keys`` ``("mask_inverted",)``: the inverted noise mask (``CosmosPredict2ImageToVideoLatent``:
  zeros on the given start / end frames) is a channel of ``x``, built before the call; the frames
  themselves are in the latent, which the sampler mixes in.
- ``denoise_mask`` (the noise mask, a tensor argument of ``_forward`` it does not read) makes
  ``process_timestep`` (model_base.py:1459-1467) send per-frame timesteps ``[B, T]``, zero on the
  given frames: ``predict2.py:879`` branches on ``timesteps.ndim``, a shape in the key.
- Without a start image the node returns a latent with no noise mask: 17 channels all the same
  (``mask_inverted`` zeros) and ``[B]`` timesteps, another signature.

anima (``bcg_runtime/comfy/models/anima.py``). A Cosmos-Predict2 2B text-to-image DiT (``MiniTrainDIT``: 28 blocks
of 2048, 16 heads, Wan 2.1's latent, 5-D with T = 1) with a text adapter in front: ``LLMAdapter`` (6 blocks of
1024) reads a Qwen3-0.6B context (1024 wide) and the prompt's T5 token ids (``t5xxl_ids``, with per-token
``t5xxl_weights``) and returns a 1024-wide context of one row per T5 token, zero-padded to 512 rows
(comfy/ldm/anima/model.py:198-208; the padding at model.py:204-205). Under ``torch.inference_mode``
``model_base.Anima.extra_conds`` (model_base.py:1485-1499) runs the adapter once per conditioning before
sampling; outside it (training) ``Anima.forward`` runs it on every call (model.py:210-213) before
``MiniTrainDIT.forward`` enters the DIFFUSION_MODEL wrapper, BCG's hook (predict2.py:839). The DiT's forward is
Cosmos-Predict2's, read in test_cosmos_predict2.py's audit.
"""

import os

import pytest
import torch
from bcg_testing import (
    OneModelAtATime,
    check_gpu_verification_state,
    check_inputs_are_read_live,
    check_padded_prompts_batch_cond_and_uncond,
    conds,
    release_cuda_memory,
    sample_both,
    session_of,
    skip_unless_host_builds,
    with_extras,
)

from bcg_runtime.comfy.models.cosmos import TENSOR_FPS_REFUSAL
from bench import synthetic

pytestmark = pytest.mark.comfy
FIRST = "first call, captured"


def _randn(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def video2world(family, width=64, height=64, frames=None):
    """check_inputs_are_read_live arguments for ``family``'s image-to-video latent node
    (``CosmosImageToVideoLatent`` / ``CosmosPredict2ImageToVideoLatent``): the start image's latent
    in the first latent frame and a noise mask that is zero there."""
    info = synthetic.family_info(family)
    frames = frames or info.temporal_downscale + 1  # two latent frames
    T, H, W = (frames - 1) // info.temporal_downscale + 1, height // 8, width // 8

    def latent(seed):
        return torch.cat([_randn(seed, 1, 16, 1, H, W), torch.zeros(1, 16, T - 1, H, W)], dim=2)

    def noise_mask(seed):
        mask = torch.ones(1, 1, T, H, W)
        mask[:, :, :1] = 0.0
        return mask

    return {
        "inputs": lambda seed: {},
        "latent": latent,
        "noise_mask": noise_mask,
        "frames": frames,
        "width": width,
        "height": height,
    }


@pytest.fixture(scope="module")
def models():
    held = OneModelAtATime()
    yield held
    held.release()


def test_cosmos_stays_off_until_its_gpu_test_passed(pack, models, standin_graphs, monkeypatch):
    """Cosmos 1.0, Predict2 Video2World and Anima are off until the lead's H200 run (the same code
    path for each; Cosmos 1.0 here)."""
    check_gpu_verification_state(pack[1], models.get("cosmos"), "cosmos", monkeypatch)


def test_cosmos_padded_prompts_batch_cond_and_uncond_and_replay_exactly(pack, models, standin_graphs):
    check_padded_prompts_batch_cond_and_uncond(
        pack[1], models.get("cosmos"), "cosmos", frames=(9,), shapes=((1, 16, 2, 8, 8),)
    )


def test_cosmos_frame_rate_is_a_constant_of_the_key_and_a_tensor_one_runs_eager(pack, models, standin_graphs):
    model = models.get("cosmos")
    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, _ = conds("cosmos")
    outs = []
    for rate in (24.0, 12.0):
        cond = with_extras(positive, {"frame_rate": rate})
        out, eager = sample_both("cosmos", bcg_model, model, 64, 64, 2, 1.0, cond, cond, seed=3, frames=9)
        assert torch.equal(out, eager)
        assert session.last_run["eager"] == {f"{FIRST}: 64x64x9f txt512 b1": 1} and session.last_run["replayed"] == 1, (
            session.last_run
        )
        outs.append(eager)
    assert not torch.equal(*outs), "the frame rate scales the RoPE's time positions"
    cond = with_extras(positive, {"frame_rate": torch.tensor([24.0])})
    out, eager = sample_both("cosmos", bcg_model, model, 64, 64, 2, 1.0, cond, cond, seed=3, frames=9)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {TENSOR_FPS_REFUSAL: 2} and session.last_run["replayed"] == 0, session.last_run


@pytest.mark.parametrize("family", ["cosmos_i2v", "cosmos_predict2_i2v"])
def test_the_video2world_start_frames_and_mask_are_read_live(pack, models, standin_graphs, family):
    model = models.get(family)
    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    check_inputs_are_read_live(family, model, bcg_model, **video2world(family))


def test_anima_prompts_reach_the_dit_as_512_rows_and_batch_under_inference_mode(pack, models, standin_graphs):
    model = models.get("anima")
    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, negative = conds("anima")
    assert [c[0][0].shape[1] for c in (positive, negative)] == [40, 17]
    with torch.inference_mode():  # as ComfyUI executes a workflow: the text adapter runs in extra_conds
        out, eager = sample_both("anima", bcg_model, model, 64, 64, 3, 2.0, positive, negative, seed=3)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64 txt512 b2": 1} and session.last_run["replayed"] == 2, (
        session.last_run
    )
    # Outside inference mode Anima.forward adapts each conditioning on each call: two batch-1 calls
    # a step, both 512 rows, one graph.
    out, eager = sample_both("anima", bcg_model, model, 64, 64, 3, 2.0, positive, negative, seed=3)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64 txt512 b1": 1} and session.last_run["replayed"] == 5, (
        session.last_run
    )


def test_anima_t5_ids_are_read_live(pack, models, standin_graphs):
    model = models.get("anima")
    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args

    def ids(seed):
        return {
            "t5xxl_ids": torch.randint(
                0, 32128, (40,), generator=torch.Generator().manual_seed(seed), dtype=torch.int32
            ),
            "t5xxl_weights": torch.ones(40),
        }

    check_inputs_are_read_live("anima", model, bcg_model, ids)


GPU_FAMILIES = [
    f
    for f in (os.environ.get("BCG_GPU_FAMILIES", "").split() or ["cosmos_i2v", "cosmos_predict2_i2v"])
    if f in ("cosmos_i2v", "cosmos_predict2_i2v")
]


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"
)
@pytest.mark.parametrize("family", GPU_FAMILIES)
def test_the_video2world_inputs_are_bit_exact_on_cuda(family):
    """The real width at the recipe's ``gpu_test_depth``, 832x480 at 3 latent frames, the same
    checks as the CPU test, through bcg_runtime.comfy.api (the GPU image has no PyAV)."""
    from bcg_runtime.comfy import api

    skip_unless_host_builds(family)
    model = synthetic.load_model(family, depth=synthetic.family_info(family).gpu_test_depth, seed=0, device="cuda")
    try:
        bcg_model = api.apply(model, "auto")
        frames = 2 * synthetic.family_info(family).temporal_downscale + 1
        check_inputs_are_read_live(family, model, bcg_model, **video2world(family, 832, 480, frames))
    finally:
        del model
        release_cuda_memory(unload=True)
