"""Kandinsky 5 Video (``Kandinsky5``): the adapter inside real ComfyUI, on a depth-1 Video Lite
model at the real width (model 1792; one text and one visual block).

Latents are 5-D ``[B,16,T,H,W]`` at 8x; the DiT sees 33 channels (``concat_cond`` adds a start
latent and a mask, zeros for T2V). Each frame count is its own signature, labelled in pixel frames
(``64x64x5f txt40 b1``); the Qwen2.5-VL context keeps its exact length, so cond and uncond of
different lengths are two batch-1 signatures. Kandinsky5ImageToVideo's ``time_dim_replace`` (an
in-place write into the DiT's input) replays exactly here, where that input is a fresh
concatenation. The family stays off for users until its GPU exactness test has passed, unless
they opt in. CPU stand-in here; test_full_size_cuda.py samples the full model. The model file is
the same in ComfyUI 0.8.0 and 0.33.0: these tests run on both.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/kandinsky5.py`` (also Image Lite's adapter class). Text blocks refine the
Qwen2.5-VL-7B context (3584) alone (1-D RoPE over its tokens), then visual blocks run self-attention over the
video tokens and cross-attention to the text; the CLIP-L pooled output (768, ``y``) joins the time embedding.
Video latents are the HunyuanVideo latent ``[B,16,T,H,W]`` (8x, 4x temporal); ``model_base.Kandinsky5.concat_cond``
always appends a start image latent and a mask (zeros for T2V). Image Lite takes the FLUX.1 latent ``[B,16,H,W]``
(``_forward`` unsqueezes a frame). Cond and uncond of different lengths run as two batch-1 calls (``c_crossattn``
and ``y`` are ``CONDRegular``). A mask that reaches the DiT (``attention_mask``, a batch of prompts) is ignored by
``_forward`` (``**kwargs``); its shape is in the key anyway. Read for host syncs and value-dependent branches
(comfy/ldm/kandinsky5/model.py):

- l.47 ``self.freqs.to(device=timestep.device)``: a buffer made on the CPU at construction; a full
  load moves it with the module (``model.to``), so on the device the ``.to`` is a no-op. Lowvram
  loads, where it could stay behind, are refused by BCG's guards.
- l.142 / l.181 chunked attention and feed-forward above 8192 tokens: ``x.shape[1]``, a shape.
- l.345-347 Video Pro (``model_dim`` 4096) switches its RoPE scale at ``h * w >= 14080``: shapes.
  l.334 ``rope_options`` (in the key). l.313 / l.354 position ids from ``torch.linspace`` over
  Python numbers.
- l.398 ``time_dim_replace`` (``Kandinsky5ImageToVideo``'s start frames) is written into ``x`` in
  place. The video model's ``x`` is a fresh ``torch.cat`` (concat channels), read by nobody after
  the call, so a replay writing only its own copy is exact. Image Lite has no concat: ``x`` can be
  the sampler's own latent (``_apply_model``'s ``xc`` when no cast is needed), which ComfyUI reads
  again in ``calculate_denoised``; such calls are refused (``Kandinsky5Adapter.refusal``).
- l.117 ``apply_rope1`` via ``comfy_kitchen``: backend from shapes and dtypes; ``in_training`` a
  process flag. Flux's ``rope`` (``flux/math.py:19``) computes on the CPU only where the device has
  no float64 (not CUDA).
- l.375-384 ``total_blocks``, ``block_type``, ``block_index`` (bookkeeping in options.py);
  ``patches_replace`` makes the call eager.
- No op syncs with the host, so mode 'full' is safe. ``forward`` runs ``_forward`` through the
  DIFFUSION_MODEL ``WrapperExecutor`` in both hosts (l.408).
"""

import pytest
import torch
from bcg_testing import (
    WARMUP_ONLY,
    check_each_prompt_length_is_its_own_graph,
    check_gpu_verification_state,
    conds,
    sample_both,
    session_of,
)

pytestmark = pytest.mark.comfy
FAMILY = "kandinsky5"
FIRST = "first call, captured"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_each_frame_count_and_prompt_length_is_its_own_graph_and_replays_exactly(pack, model, standin_graphs):
    check_each_prompt_length_is_its_own_graph(
        pack[1], model, FAMILY, frames=(1, 5), shapes=((1, 16, 1, 8, 8), (1, 16, 2, 8, 8))
    )


def test_image_to_video_start_frames_replay_exactly(pack, model, standin_graphs):
    """Kandinsky5ImageToVideo's extras: ``time_dim_replace`` (the start frames' latent, written into
    ``x`` by the forward) and ``concat_mask``. Another start image of the same shape replays."""
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, _ = conds(FAMILY)
    mask = torch.ones(1, 1, 2, 8, 8)
    mask[:, :, :1] = 0.0

    def i2v(seed):
        start = torch.randn(1, 16, 1, 8, 8, generator=torch.Generator().manual_seed(seed))
        return [[positive[0][0], {**positive[0][1], "time_dim_replace": start, "concat_mask": mask}]]

    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, i2v(1), i2v(1), seed=3, frames=5)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64x5f txt40 b1": 1}, session.last_run
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, i2v(2), i2v(2), seed=4, frames=5)
    assert torch.equal(out, eager)
    assert session.last_run["replayed"] == 2 and session.runner.stats.captures == 1, session.last_run


def test_an_unwarmed_frame_count_falls_back_with_its_label(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    session = session_of(bcg_model)
    positive, negative = conds(FAMILY)
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64x5", "", "1", positive, negative).args
    assert "64x64x5f txt40 b1: captured" in report and "NOT exact" not in report, report
    out, eager = sample_both(FAMILY, warmed, model, 64, 64, 2, 1.0, positive, negative, seed=9, frames=5)
    assert torch.equal(out, eager)
    assert session.last_run["replayed"] == 2 and not session.last_run["eager"], session.last_run
    out, eager = sample_both(FAMILY, warmed, model, 64, 64, 2, 1.0, positive, negative, seed=9, frames=9)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {"not captured: 64x64x9f txt40 b1": 2}, session.last_run
