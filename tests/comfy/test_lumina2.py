"""Lumina 2 (``Lumina2``): the adapter inside real ComfyUI, on a depth-1 Lumina-Image-2.0 model.

Captions reach the DiT unpadded (Gemma-2-2B does not pad, this NextDiT has no pad tokens), so each
caption length is its own signature: cond and uncond of different lengths run as two batch-1
calls, each replaying its own graph, and equal lengths batch into one call. Until its GPU
exactness test has passed on the H200 the family stays off for users unless they opt in.
CPU stand-in here; test_full_size_cuda.py samples the full-depth model at 512² and 1024².
Lumina2 exists in ComfyUI 0.8.0 and 0.33.0: these tests run on both.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/lumina2.py``. 24 query heads over 8 key/value heads (grouped-query attention), 26
layers, no learned pad tokens, a Gemma-2-2B caption (2304 wide). ``ZImage`` subclasses ``Lumina2`` in ComfyUI.
Gemma-2-2B's tokenizer: ``pad_to_max_length=False``; the image tokens' RoPE positions start after the caption
(``model.py:707``); ``c_crossattn`` is a ``CONDRegular`` and ``num_tokens`` a ``CONDConstant``: neither
concatenates across lengths. Read for host syncs and value-dependent branches (``comfy/ldm/lumina/model.py``):

- ``model_base.py:1514`` ``torch.sum(attention_mask).item()`` computes ``num_tokens`` in
  ``extra_conds``, once per conditioning, before sampling: not in the forward. ``num_tokens`` is a
  Python int argument, so it is part of the key (it is unused by the forward in 0.33.0 and 0.8.0).
- ``model.py:721`` and ``:813`` set the caption and joint masks to None: a passed
  ``attention_mask`` (only when it holds zeros) is ignored in 0.33.0. In 0.8.0 it reaches the
  context refiner's attention as a tensor; its shape is in the key, its values are read on the
  device. Either way: shape-only.
- ``model.py:826`` ``omni = len(ref_latents) > 0`` and the ``timestep_zero_index`` slices built from
  it (Z-Image Omni only): Python lists of shapes, in the key through ``ref_latents``' shapes.
- ``model.py:844`` the NewBie pooled branch tests ``clip_text_pooled`` for None: an argument
  whose presence and shape are in the key.
- ``model.py:165`` ``comfy_kitchen`` ``rms_rope1`` (the GQA path; Z-Image takes ``rms_rope``):
  dispatch picks a backend from shapes, strides and dtypes, no host read. ``in_training`` is a
  process flag, constant across a sampling run. 0.8.0 calls ``flux.math.apply_rope`` instead.
- ``model.py:638`` ``unpatchify`` loops over the batch size with sizes from shapes.
- ``model.py:864`` ``double_block`` / ``noise_refiner`` patches: any patch makes the call eager
  (``options.py``).
- No op syncs with the host, so mode 'full' is safe. ``forward`` runs ``_forward`` through the
  DIFFUSION_MODEL ``WrapperExecutor`` in both hosts (0.33.0 ``model.py:817``, 0.8.0 likewise).
"""

import pytest
from bcg_testing import (
    check_an_unwarmed_size_falls_back_with_its_label,
    check_each_prompt_length_is_its_own_graph,
    check_gpu_verification_state,
)

pytestmark = pytest.mark.comfy
FAMILY = "lumina2"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_each_caption_length_is_its_own_graph_and_replays_exactly(pack, model, standin_graphs):
    check_each_prompt_length_is_its_own_graph(pack[1], model, FAMILY)


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    check_an_unwarmed_size_falls_back_with_its_label(pack[1], model, FAMILY, tokens=40)
