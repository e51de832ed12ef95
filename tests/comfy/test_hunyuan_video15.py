"""HunyuanVideo 1.5 (``HunyuanVideo15``): the adapter inside real ComfyUI, on a depth-1 8.3B-shaped
model (hidden 2048, one double block).

Latents are 5-D ``[B,32,T,H,W]`` at 16x; the DiT sees 65 channels (``concat_cond`` adds an image
latent and a mask, zeros for T2V). Each frame count is its own signature, labelled in pixel frames
(``64x64x5f txt40 b1``). The Qwen2.5-VL context keeps its exact length, so cond and uncond of
different lengths are two batch-1 signatures. byT5 glyph text and SigLIP features (I2V) are
arguments the key sees. Meanflow checkpoints (``time_r_in``) run eager with the reason.
CPU stand-in here (64x64 px, 1, 5 and 9 frames); ``test_480p_video_is_bit_exact_on_cuda`` runs
848x480 at 33 and 17 frames at the real width on the H200.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/hunyuan_video15.py``. The DiT: hidden 2048, 16 heads of 128, 54 double-stream blocks
and no single-stream block, Qwen2.5-VL-7B context (3584), a byT5 glyph mapper (``byt5_in``), a SigLIP vision
projection (``vision_in``, 1152) and a ``cond_type_embedding``; ``EmptyHunyuanVideo15Latent``: T = (frames-1)//4
+ 1, patch 1x1x1. The checkpoint's ``img_in`` takes 65 channels, so ``model_base.HunyuanVideo15.concat_cond``
always concatenates an image latent and a mask (zeros for T2V, the start image for
``HunyuanVideo15ImageToVideo``).

Text: the Qwen2.5-VL encoder returns the exact token count after its template (no padding) and drops an all-ones
mask (``qwen_image.py`` l.82). Cond and uncond of different lengths run apart (ComfyUI batches them only when it
may repeat the shorter one). A mask reaches the DiT only when the encoder saw padding (a batch of prompts): the
encoder drops an all-ones one, and although ``model_base.HunyuanVideo15.extra_conds`` (0.33 l.2672) also passes
only a mask with a zero, its ``super()`` (``HunyuanVideo.extra_conds``, l.1371) passes any mask it gets. It is
then a tensor argument like any other (shape in the key, values copied at replay). (Stock l.388 writes the
``[B, L]`` mask into a ``[1, T]`` slice, T counting glyph and vision tokens too, so stock ComfyUI runs masked
text only at batch 1 with text tokens alone.)

Read for host syncs and value-dependent branches (comfy/ldm/hunyuan_video/model.py; 0.8.0 has the same forward
with the image tokens first, ``flipped_img_txt``, and no ``img_slice``):

- l.315-321, meanflow checkpoints (``time_r_in``, the step-distilled variants) unless
  ``disable_time_r``: ``torch.where(sigmas[0] == sample_sigmas)`` (a one-argument ``where``: a host
  sync), ``len(w) > 0`` (a Python branch on its values) and ``sample_sigmas[w[0] + 1]`` read the
  sampler's schedule from ``transformer_options``, which options.py treats as bookkeeping. A graph
  would freeze the branch and the r-timestep of its capture: ``refusal`` sends such calls
  eager with the reason. The base checkpoints have no ``time_r_in``.
- l.351: ``torch.is_floating_point(txt_mask)``: the mask's dtype, in the key. l.352 turns an
  integer mask into an additive one on the device; the token refiner (l.124-126) and l.385-388
  build the attention masks from shapes and device copies: no sync.
- l.162: ``x.dtype`` branch in ``TokenRefiner``: in the key. l.357: ``cond_type_embedding.to``
  is a no-op once the weights are on the device (a plain ``nn.Embedding``: ComfyUI loads it whole,
  in float32, and l.359 casts its rows).
- l.361 ``txt_byt5`` (``conditioning_byt5small``: quoted text in the prompt), l.372 ``clip_fea``
  (``clip_vision_output.last_hidden_state``, I2V), l.323 ``ref_latent``, l.331
  ``guiding_frame_index``: presence of arguments, in the key; their token counts are shapes.
- l.347: ``guidance_embed`` is a fixed config (False for the 1.5 checkpoints: the ``guidance``
  6.0 that ``model_base.HunyuanVideo.extra_conds`` always sends is then unused).
- l.393-420: ``total_blocks``, ``block_type``, ``block_index``, ``img_slice`` written for patches
  (bookkeeping in options.py); ``patches_replace`` makes the call eager. l.409 ``control``
  (ControlNet) is an argument; l.447-456 reshape by shapes. img_ids: ``torch.linspace`` over
  Python numbers from shapes.
- Outside the DiT: ``model_base.HunyuanVideo15.extra_conds`` (``numel != sum`` of the mask) runs
  once per conditioning, before sampling.
- So mode 'full' is safe for every call not refused. The forward goes through the DIFFUSION_MODEL
  wrapper (``HunyuanVideo.forward`` -> ``WrapperExecutor`` around ``_forward``, l.481) in both hosts.
"""

from types import SimpleNamespace

import pytest
import torch
from bcg_testing import (
    WARMUP_ONLY,
    check_each_prompt_length_is_its_own_graph,
    check_gpu_verification_state,
    conds,
    release_cuda_memory,
    sample_both,
    session_of,
    skip_unless_host_builds,
)

from bench import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "hunyuan_video15"
FIRST = "first call, captured"


def with_extras(cond, **extras):
    return [[cond[0][0], {**cond[0][1], **extras}]]


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_each_frame_count_and_prompt_length_is_its_own_graph_and_replays_exactly(pack, model, standin_graphs):
    bcg_model = check_each_prompt_length_is_its_own_graph(
        pack[1], model, FAMILY, frames=(1, 5), shapes=((1, 32, 1, 4, 4), (1, 32, 2, 4, 4))
    )
    session = session_of(bcg_model)

    # Another length is another signature.
    longer, negative = synthetic.make_conditioning(FAMILY, 41, seed=7), synthetic.make_conditioning(FAMILY, 17, seed=6)
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, longer, negative, seed=4, frames=5)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64x5f txt41 b1": 1}, session.last_run


def test_typed_video_warmup_captures_what_the_sampler_sends(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    session = session_of(bcg_model)
    positive, negative = conds(FAMILY)
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64x5", "", "1", positive, negative).args
    assert "64x64x5f txt40 b1: captured" in report and "64x64x5f txt17 b1: captured" in report, report
    assert "NOT exact" not in report and session.runner.stats.captures == 2, report

    for cfg, calls in ((2.0, 4), (1.0, 2)):
        out, eager = sample_both(FAMILY, warmed, model, 64, 64, 2, cfg, positive, negative, seed=9, frames=5)
        assert torch.equal(out, eager)
        assert session.last_run["replayed"] == calls and not session.last_run["eager"], session.last_run

    # A frame count the warm-up did not take falls back and names itself.
    out, eager = sample_both(FAMILY, warmed, model, 64, 64, 2, 1.0, positive, negative, seed=9, frames=9)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {"not captured: 64x64x9f txt40 b1": 2}, session.last_run
    assert session.runner.stats.captures == 2


def test_glyph_text_i2v_inputs_and_a_text_mask_are_arguments_the_key_sees(pack, model, standin_graphs):
    """A prompt with quoted text adds ``conditioning_byt5small`` (byT5, [1, N, 1472]) which reaches
    the DiT as ``txt_byt5``; HunyuanVideo15ImageToVideo adds ``concat_latent_image`` and
    ``concat_mask`` (channels of ``x``) and ``clip_vision_output`` (SigLIP ``last_hidden_state``
    [1, 729, 1152] -> ``clip_fea``). Each presence is another signature, captured apart and
    replayed exactly; other values of the same shapes replay without a new capture."""
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, _ = conds(FAMILY)

    def randn(seed, *shape):
        return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))

    def glyph(seed):
        return with_extras(positive, conditioning_byt5small=randn(seed, 1, 12, 1472))

    def i2v(seed):
        mask = torch.ones(1, 1, 2, 4, 4)
        mask[:, :, :1] = 0.0
        return with_extras(
            positive,
            concat_latent_image=randn(seed, 1, 32, 2, 4, 4),
            concat_mask=mask,
            clip_vision_output=SimpleNamespace(last_hidden_state=randn(seed + 100, 1, 729, 1152)),
        )

    def masked(seed):
        """A padded prompt's mask (only a batch of prompts makes one): another signature whose
        values (how many rows are padding) are copied in at each replay."""
        mask = torch.ones(1, 40, dtype=torch.int64)
        mask[:, 40 - 3 - seed :] = 0
        return with_extras(positive, attention_mask=mask)

    cases = ((glyph, "64x64x5f txt40 b1 byt5:12"), (i2v, "64x64x5f txt40 b1 vision:729"), (masked, "64x64x5f txt40 b1"))
    for make, label in cases:
        captures = session.runner.stats.captures
        out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, make(1), make(1), seed=3, frames=5)
        assert torch.equal(out, eager)
        assert session.last_run["eager"] == {f"{FIRST}: {label}": 1}, session.last_run
        out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, make(2), make(2), seed=3, frames=5)
        assert torch.equal(out, eager)
        assert session.last_run["replayed"] == 2 and not session.last_run["eager"], session.last_run
        assert session.runner.stats.captures == captures + 1, session.last_run

    # The plain prompt (no mask, no glyphs, no image) is yet another signature.
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, positive, positive, seed=3, frames=5)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64x5f txt40 b1": 1}, session.last_run


def test_a_meanflow_checkpoint_runs_eager_and_says_why(pack, model, standin_graphs, monkeypatch):
    """Step-distilled checkpoints carry ``time_r_in``: their forward looks the next sigma up in the
    sampler's schedule with a one-argument ``torch.where`` (model.py l.316), which a graph would
    freeze. BCG Apply reads ``time_r_in`` from the model and sends every such call eager."""
    import comfy.ops
    from comfy.ldm.flux.layers import MLPEmbedder

    _, nodes = pack
    dm = model.model.diffusion_model
    time_r_in = MLPEmbedder(256, 2048, dtype=torch.float32, operations=comfy.ops.disable_weight_init)
    with torch.no_grad():
        for p in time_r_in.parameters():
            p.normal_(0.0, 0.02, generator=torch.Generator().manual_seed(11))
    positive, negative = conds(FAMILY)
    plain = synthetic.sample(model, FAMILY, 64, 64, 2, 1.0, positive, negative, seed=3, frames=5)
    # beside the loaded weights (on the GPU after a sampling, in the dtype ComfyUI chose, fp16 there)
    weight = next(dm.parameters())
    monkeypatch.setattr(dm, "time_r_in", time_r_in.to(device=weight.device, dtype=weight.dtype))
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, positive, negative, seed=3, frames=5)
    assert torch.equal(out, eager) and not torch.equal(eager, plain)  # the r-timestep changes the math
    run = session_of(bcg_model).last_run
    [(reason, n)] = run["eager"].items()
    assert n == 2 and "meanflow" in reason and "torch.where" in reason, run
    assert session_of(bcg_model).runner.stats.captures == 0


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"
)
def test_480p_video_is_bit_exact_on_cuda():
    """The real width (hidden 2048, 16 heads) at ``gpu_test_depth`` double blocks: 848x480 at 33
    frames (9 latent frames, 14,310 tokens) and 17 frames, cfg 1 and cfg > 1 (prompts of 40 and
    17 tokens: two batch-1 signatures), warmed through the typed ``WIDTHxHEIGHTxFRAMES`` plan,
    replayed bit-equal to eager; an unwarmed frame count names itself.
    Through bcg_runtime.comfy.api (the GPU image has no PyAV for the node shells)."""
    from bcg_runtime.comfy import api
    from bcg_runtime.comfy.hooks import session_of as api_session_of

    skip_unless_host_builds(FAMILY)
    depth = synthetic.family_info(FAMILY).gpu_test_depth
    model = synthetic.load_model(FAMILY, depth=depth, seed=0, device="cuda")
    try:
        positive, negative = conds(FAMILY)
        warmed = api.apply(model, "auto", capture=WARMUP_ONLY)
        report = api.warm_up(warmed, "848x480x33, 848x480x17", "", "1", positive, negative).text()
        print(report)
        assert "NOT exact" not in report, report
        assert "848x480x33f txt40 b1: captured" in report and "848x480x17f txt17 b1: captured" in report, report
        session = api_session_of(warmed)
        captures = session.runner.stats.captures
        for frames in (33, 17):
            for cfg in (1.0, 6.0):
                eager = synthetic.sample(model, FAMILY, 848, 480, 2, cfg, positive, negative, seed=7, frames=frames)
                out = synthetic.sample(warmed, FAMILY, 848, 480, 2, cfg, positive, negative, seed=7, frames=frames)
                assert session.last_run["state"] == "replayed", (frames, cfg, session.last_run)
                assert torch.equal(out, eager), (frames, cfg, (out - eager).abs().max().item())
        assert session.runner.stats.captures == captures
        synthetic.sample(warmed, FAMILY, 848, 480, 1, 1.0, positive, negative, seed=8, frames=9)
        assert any("848x480x9f" in reason for reason in session.last_run["eager"]), session.last_run
    finally:
        del model
        release_cuda_memory(unload=True)
