"""OmniGen2 (``Omnigen2``): the adapter inside real ComfyUI, on a depth-1 model at the real width
(hidden 2520; one layer and one block per refiner; detection fixes the depth, so the synthetic
load sets it).

Captions reach the DiT unpadded and the image positions follow them, so each caption length is its
own signature: cond and uncond of different lengths run as two batch-1 calls. Reference latents
(image editing) are a list argument: their shapes are in the key, their values copied at replay.
The class has no ``_forward``: BCG sees its calls through the ``diffusion_model.forward`` object
patch. Until its GPU exactness test has passed on the H200 the family stays off for users unless
they opt in. CPU stand-in here; test_full_size_cuda.py samples the full model. OmniGen2 exists in
ComfyUI 0.8.0 and 0.33.0: these tests run on both.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/omnigen2.py``. Hidden 2520, 21 query heads over 7 key/value heads (grouped-query
attention, head 120), 32 layers, 2 blocks in each of the noise, reference-image and context refiners, a
Qwen2.5-VL-3B caption (2048), the FLUX.1 latent (16 channels at 8x, patch 2). Detection (``model_detection.py:900``)
fixes every size, the depth included, so a reduced-depth test model gets its block counts at load
(``FamilyInfo.depth_fixed_by_detection``). ``model_base.Omnigen2.extra_conds`` passes the context, ``num_tokens``
and the attention mask only when it holds zeros. Read for host syncs and value-dependent branches
(comfy/ldm/omnigen/omnigen2.py):

- ``model_base.py:2444-2446`` ``torch.numel(mask) != mask.sum()`` and ``.item()`` compute the mask
  policy and ``num_tokens`` in ``extra_conds``, once per conditioning, before sampling: not in the
  forward.
- ``:206-265`` the RoPE position ids: Python loops over the batch and the reference images, with
  lengths from ``num_tokens`` (in the key) and shapes; the writes are device slices.
- ``:358-376`` ``flat_and_pad_to_seq`` and ``:397-401`` the per-reference index embedding: loops
  over shapes, in-place adds on an intermediate. ``ref_latents`` is a list argument whose shapes
  are in the key.
- ``:18`` ``x.shape[1] == 0``; ``:144`` GQA flag from the config; ``:25`` in-place ``silu`` /
  ``mul_`` on intermediates.
- ``:145`` ``optimized_attention_masked`` with the context refiner's mask (only a padded batch of
  prompts sends one): a tensor argument, its values read on the device; the main layers get none.
- ``comfy_kitchen`` ``apply_rope1`` (0.8.0: plain torch): backend from shapes and dtypes. Flux's
  ``rope`` computes on the CPU only where the device has no float64 (not CUDA).
- No op syncs with the host, so mode 'full' is safe. The class has no ``_forward`` (0.8.0 and
  0.33.0). Patches (none are read by this forward) still make a call eager through ``options.py``.
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

from bench import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "omnigen2"
FIRST = "first call, captured"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_each_caption_length_is_its_own_graph_and_replays_exactly(pack, model, standin_graphs):
    assert len(model.model.diffusion_model.layers) == len(model.model.diffusion_model.context_refiner) == 1
    check_each_prompt_length_is_its_own_graph(pack[1], model, FAMILY)


def test_reference_latents_are_keyed_by_shape_and_replay_exactly(pack, model, standin_graphs):
    """ReferenceLatent's ``reference_latents``: another image of the same size replays the graph;
    another size is another graph."""
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, _ = conds(FAMILY)

    def edit(seed, h=8, w=8):  # latent cells
        ref = synthetic.make_reference_latent(FAMILY, 8 * w, 8 * h, seed=seed)
        return synthetic.with_reference_latents(positive, [ref])

    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, edit(1), edit(1), seed=3)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64 txt40 b1": 1} and session.last_run["replayed"] == 1, (
        session.last_run
    )
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, edit(2), edit(2), seed=4)
    assert torch.equal(out, eager)
    assert session.last_run["replayed"] == 2 and session.runner.stats.captures == 1, session.last_run
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, edit(3, 12, 8), edit(3, 12, 8), seed=4)
    assert torch.equal(out, eager)
    assert session.last_run["eager"] == {f"{FIRST}: 64x64 txt40 b1": 1} and session.runner.stats.captures == 2, (
        session.last_run
    )


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    positive, negative = conds(FAMILY)
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, negative).args
    assert "replay exact" in report, report
    out, eager = sample_both(FAMILY, warmed, model, 64, 64, 2, 1.0, positive, negative, seed=3)
    assert torch.equal(out, eager)
    assert session_of(warmed).last_run["replayed"] == 2, session_of(warmed).last_run
    out, eager = sample_both(FAMILY, warmed, model, 96, 64, 2, 1.0, positive, negative, seed=3)
    assert torch.equal(out, eager)
    assert session_of(warmed).last_run["eager"] == {"not captured: 96x64 txt40 b1": 2}, session_of(warmed).last_run
