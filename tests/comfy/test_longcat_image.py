"""LongCat-Image (``LongCatImage``): the adapter inside real ComfyUI, on a depth-1 LongCat-Image-shaped
model (FLUX.1's DiT at 3072 wide with a 3584-wide Qwen2.5-VL context, text RoPE along the prompt).

Every prompt reaches the DiT padded to 512 tokens, so cond and uncond batch into one call (``b2``)
and one graph serves every prompt at a size; cfg 1 is the batch-1 signature. An edit call's
reference latent is another signature named by its size. CPU stand-in here; test_full_size_cuda.py
samples the full-depth model. ComfyUI 0.8.0 has no LongCatImage: these tests skip there.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/longcat_image.py``. FLUX.1's DiT at 3072 wide, 24 heads, 10 double and 20 single blocks
(6B), a Qwen2.5-VL-7B context (3584) whose RoPE ids count along the text (``txt_ids_dims`` [1, 2]).
``LongCatImageBaseTokenizer`` pads (or truncates) every prompt to 512 tokens with real pad tokens, and
``LongCatImageTEModel`` strips the template around them. The encoder's mask over the padding is dropped by
``model_base.Flux.extra_conds`` (l.1030-1039: only a mask with ``attention_mask_img_shape``, a region mask,
reaches the DiT). ``model_base.LongCatImage._apply_model`` (l.1065-1074) sets ``rope_options`` shifts from the
context length. Read for host syncs and value-dependent branches (``comfy/ldm/flux/``), beyond what the flux
audit (test_reference_latents.py) lists for the shared forward (reference latents, ``process_img``, bookkeeping):

- model.py:402-404: text position ids are ``linspace`` over the context length (a shape).
- model.py:329-336 ``process_img`` reads ``rope_options`` (the shifts above): in the key.
- ``model_base.LongCatImage.extra_conds`` pops ``guidance``; ``encode_adm`` returns None (no ``y``).
- LongCat-Image-Edit calls carry ``ref_latents`` (the ReferenceLatent node): shapes in the key,
  values copied at replay, each size named in the label (``ref WxH``), as FLUX.1 Kontext.
- No op syncs with the host, so mode 'full' is safe. ``Flux.forward`` (model.py:344) runs ``_forward``
  through the DIFFUSION_MODEL ``WrapperExecutor``.
"""

import pytest
import torch
from bcg_testing import (
    check_an_unwarmed_size_falls_back_with_its_label,
    check_gpu_verification_state,
    check_padded_prompts_batch_cond_and_uncond,
    conds,
    sample_both,
    session_of,
)

from bench import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "longcat_image"
FIRST = "first call, captured"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_every_prompt_is_512_tokens_so_cond_and_uncond_share_one_graph(pack, model, standin_graphs):
    check_padded_prompts_batch_cond_and_uncond(pack[1], model, FAMILY)


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    check_an_unwarmed_size_falls_back_with_its_label(pack[1], model, FAMILY, tokens=512, batch=2)


def test_an_edit_reference_latent_is_a_signature_named_by_its_size(pack, model, standin_graphs):
    """LongCat-Image-Edit: the ReferenceLatent node's ``reference_latents`` reach the DiT as
    ``ref_latents``: captured apart, labelled with the reference's pixel size; another image of
    that size replays without a new capture and equals eager."""
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, _ = conds(FAMILY)

    def edit(seed):
        return synthetic.with_reference_latents(positive, [synthetic.make_reference_latent(FAMILY, 64, 48, seed=seed)])

    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, edit(1), edit(1), seed=3)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64 txt512 b1 ref 64x48": 1}, session.last_run
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, edit(2), edit(2), seed=3)
    assert torch.equal(out, eager)
    assert session.last_run["replayed"] == 2 and session.runner.stats.captures == 1, session.last_run
    plain = synthetic.sample(model, FAMILY, 64, 64, 2, 1.0, positive, positive, seed=3)
    assert not torch.equal(plain, eager)  # the reference tokens change the output
