"""HunyuanImage 2.1 (``HunyuanImage21``): the adapter inside real ComfyUI, on a depth-1 17B-shaped
model (hidden 3584, one double and one single block, 2-D patch over a 32x VAE's 64 channels).

The Qwen2.5-VL context keeps its exact length, so cond and uncond of different lengths are two
batch-1 signatures; labels count pixels (a 2x2 latent is 64x64). byT5 glyph text (quoted text in
the prompt) is an argument whose presence and token count the key sees. Distilled (meanflow)
checkpoints run eager with the reason. CPU stand-in here; test_full_size_cuda.py samples the real
width at ``gpu_test_depth``. HunyuanImage21 exists in ComfyUI 0.8.0 and 0.33.0: both run these.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/hunyuan_image21.py``. The DiT: hidden 3584, 28 heads of 128, 20 double- and 40
single-stream blocks, a 1x1 patch over 64-channel latents of a 32x VAE (``latent_formats.HunyuanImage21``: a
2048² image is 64x64 = 4096 tokens), 2-D RoPE (``axes_dim`` [64, 64], ``img_ids_2d``), Qwen2.5-VL-7B context
(3584) and a byT5 glyph mapper. The distilled checkpoint adds ``guidance_in`` and ``time_r_in`` (meanflow).
``HunyuanImageTokenizer`` is Qwen-Image's (exact token count after the template, an all-ones mask dropped). A
mask reaches the DiT only from a padded batch of prompts (``model_base.HunyuanImage21.extra_conds``, 0.33
l.2588: ``numel != sum``, once per conditioning, before sampling): then a tensor argument (shape in the key,
values copied at replay).

Read for host syncs and value-dependent branches (comfy/ldm/hunyuan_video/model.py; 0.8.0 has the same lines
for everything below):

- l.315-321, meanflow (distilled) checkpoints unless ``disable_time_r``: ``torch.where`` with one
  argument over ``transformer_options['sample_sigmas']`` (a host sync), ``len(w) > 0`` (a Python
  branch on its values) and ``sample_sigmas[w[0] + 1]``: a graph would freeze the r-timestep of
  its capture, so ``refusal`` sends such calls eager with the reason.
- l.347-349: ``guidance_embed`` is a fixed config; ``extra_conds`` (l.2598) always sends
  ``guidance`` (6.0 unless set), a tensor argument whose values are copied at replay (unused by the
  base checkpoint). l.351 ``torch.is_floating_point(txt_mask)``: the dtype, in the key.
- l.361 ``txt_byt5`` (quoted text in the prompt): presence and token count in the key (the
  label shows ``byt5:N``). l.323 ``ref_latent``, l.331 ``guiding_frame_index``, l.372
  ``clip_fea``: presence of arguments, in the key (HunyuanImage 2.1's conditioning sends none).
- l.393-437: block bookkeeping in ``transformer_options`` (options.py); ``patches_replace`` makes
  the call eager; l.409/l.430 ``control`` (ControlNet) is an argument.
- l.447-457 unpatchify by ``initial_shape``; l.471-478 ``img_ids_2d``: ``linspace`` over Python
  numbers from shapes.
- So mode 'full' is safe for every call not refused. ``HunyuanVideo.forward`` runs ``_forward``
  through the DIFFUSION_MODEL ``WrapperExecutor`` (0.33.0 l.481, 0.8.0 l.480).
"""

import pytest
import torch
from bcg_testing import (
    check_an_unwarmed_size_falls_back_with_its_label,
    check_each_prompt_length_is_its_own_graph,
    check_gpu_verification_state,
    conds,
    sample_both,
    session_of,
)

from bench import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "hunyuan_image21"
FIRST = "first call, captured"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_each_prompt_length_is_its_own_graph_and_replays_exactly(pack, model, standin_graphs):
    check_each_prompt_length_is_its_own_graph(pack[1], model, FAMILY)


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    check_an_unwarmed_size_falls_back_with_its_label(pack[1], model, FAMILY, tokens=40, shape=(1, 64, 2, 2))


def test_glyph_text_is_an_argument_the_key_sees(pack, model, standin_graphs):
    """Quoted text in the prompt adds ``conditioning_byt5small`` (byT5, [1, N, 1472]), which
    reaches the DiT as ``txt_byt5``: another signature, captured apart and labelled ``byt5:N``;
    other glyph values of the same shape replay it without a new capture."""
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, _ = conds(FAMILY)

    def glyph(seed):
        byt5 = torch.randn(1, 12, 1472, generator=torch.Generator().manual_seed(seed))
        return [[positive[0][0], {**positive[0][1], "conditioning_byt5small": byt5}]]

    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, glyph(1), glyph(1), seed=3)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64 txt40 b1 byt5:12": 1}, session.last_run
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, glyph(2), glyph(2), seed=3)
    assert torch.equal(out, eager)
    assert session.last_run["replayed"] == 2 and session.runner.stats.captures == 1, session.last_run
    plain = synthetic.sample(model, FAMILY, 64, 64, 2, 1.0, positive, positive, seed=3)
    assert not torch.equal(plain, eager)  # the glyph tokens change the output


def test_a_distilled_meanflow_checkpoint_runs_eager_and_says_why(pack, model, standin_graphs, monkeypatch):
    """The distilled checkpoint carries ``time_r_in``: its forward looks the next sigma up in the
    sampler's schedule with a one-argument ``torch.where`` (model.py l.316), which a graph would
    freeze. BCG Apply reads ``time_r_in`` from the model and sends every such call eager."""
    import comfy.ops
    from comfy.ldm.flux.layers import MLPEmbedder

    _, nodes = pack
    dm = model.model.diffusion_model
    time_r_in = MLPEmbedder(256, 3584, dtype=torch.float32, operations=comfy.ops.disable_weight_init)
    with torch.no_grad():
        for p in time_r_in.parameters():
            p.normal_(0.0, 0.02, generator=torch.Generator().manual_seed(11))
    positive, negative = conds(FAMILY)
    plain = synthetic.sample(model, FAMILY, 64, 64, 2, 1.0, positive, negative, seed=3)
    weight = next(dm.parameters())
    monkeypatch.setattr(dm, "time_r_in", time_r_in.to(device=weight.device, dtype=weight.dtype))
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, positive, negative, seed=3)
    assert torch.equal(out, eager) and not torch.equal(eager, plain)  # the r-timestep changes the math
    run = session_of(bcg_model).last_run
    [(reason, n)] = run["eager"].items()
    assert n == 2 and "HunyuanImage 2.1 distilled" in reason and "torch.where" in reason, run
    assert session_of(bcg_model).runner.stats.captures == 0
