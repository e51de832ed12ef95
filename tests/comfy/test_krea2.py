"""Krea 2 (``Krea2``): the adapter inside real ComfyUI, on a depth-1 Krea-2-shaped model (6144
wide, 48 query over 12 key/value heads, the full txtfusion adapter over a 12 x 2560 context).

Latents are the Qwen-Image VAE's ``[B,16,1,H,W]``; labels count pixels at 8x. The Qwen3-VL
context keeps its exact length, so cond and uncond of different lengths are two batch-1
signatures. An edit call's reference latent (with ``ref_latents_method``) is another signature,
named by its size. CPU stand-in here; test_full_size_cuda.py samples the full-depth model.
ComfyUI 0.8.0 has no Krea 2: these tests skip there.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/krea2.py``. 28 blocks at 6144 (48 query heads over 12 key/value heads of 128,
sigmoid-gated attention, SwiGLU), a 2x2 patch over the Qwen-Image VAE's 16 channels (``latent_formats.Wan21``:
5-D latents, which ``_forward`` folds to 4-D), and a ``txtfusion`` adapter over a 12-layer Qwen3-VL-4B tap (the
context arrives flattened to ``12 * 2560 = 30720`` features). ``model_detection`` reads features, channels,
layers, heads, kvheads, txtlayers and txtdim from the layout; the rest are the constructor's defaults, which the
12.9B count matches. ``Krea2TEModel`` strips the template prefix, returns the exact token count and drops an
all-ones mask; ``model_base.Krea2.extra_conds`` never passes a mask and the forward ignores its
``attention_mask``. Read for host syncs and value-dependent branches (``comfy/ldm/krea2/model.py``):

- l.297-300, l.382-391: ``x.ndim == 5`` and ``_unpack_context``'s width check: shapes only.
- l.310-329 reference latents (edit): the branch needs ``ref_latents_method`` (a string argument,
  in the key) or ``default_ref_method`` (None from detection, fixed at load); token counts and
  ``timestep_zero_index`` (l.328, l.356) are Python ints from ``ref.shape``. Each reference size is
  in the key through ``ref_latents``' shapes and named in the label (``ref WxH``).
  ``reference_image_num_tokens`` and ``img_slice`` are written for patches (options.py).
- l.176-212 ``SingleStreamBlock`` with ``timestep_zero_index``: in-place ops on slices bounded by
  that Python int; device work.
- l.34, l.113, l.124 ``cast_to`` of norm scales and modulation parameters: device casts.
- l.347-351 ``post_input`` patches and l.85/l.100 attention patches: any patch makes the call
  eager (options.py).
- l.283-293 ``process_img``: ``arange`` over sizes from shapes; l.373-380 unpatchify by shapes.
- No op syncs with the host, so mode 'full' is safe. ``forward`` (l.276) runs ``_forward``
  through the DIFFUSION_MODEL ``WrapperExecutor``.
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
FAMILY = "krea2"
FIRST = "first call, captured"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_each_prompt_length_is_its_own_graph_and_replays_exactly(pack, model, standin_graphs):
    check_each_prompt_length_is_its_own_graph(pack[1], model, FAMILY)


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    check_an_unwarmed_size_falls_back_with_its_label(pack[1], model, FAMILY, tokens=40, shape=(1, 16, 1, 8, 8))


def test_a_reference_latent_is_a_signature_named_by_its_size(pack, model, standin_graphs):
    """An edit conditioning (``reference_latents`` + ``reference_latents_method``
    ``index_timestep_zero``) reaches the DiT as ``ref_latents`` and ``ref_latents_method``: captured
    apart, labelled with the reference's pixel size and method; another reference image of that
    size replays without a new capture and equals eager."""
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, _ = conds(FAMILY)

    def edit(seed):
        ref = synthetic.make_reference_latent(FAMILY, 64, 48, seed=seed)
        return synthetic.with_reference_latents(positive, [ref], "index_timestep_zero")

    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, edit(1), edit(1), seed=3)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64 txt40 b1 ref 64x48 (index_timestep_zero)": 1}, (
        session.last_run
    )
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, edit(2), edit(2), seed=3)
    assert torch.equal(out, eager)
    assert session.last_run["replayed"] == 2 and session.runner.stats.captures == 1, session.last_run
    plain = synthetic.sample(model, FAMILY, 64, 64, 2, 1.0, positive, positive, seed=3)
    assert not torch.equal(plain, eager)  # the reference tokens change the output
