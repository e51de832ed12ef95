"""Lens (``Lens``): the adapter inside real ComfyUI, on a depth-1 model at the real width (1536, 24
heads), random weights in the real key layout, on the FLUX.2 latent (128 channels, 16x), with a
context of 4 stacked GPT-OSS layers and the encoder's attention mask.

Prompts reach the DiT at their exact length: cond and uncond of two lengths are two batch-1
signatures, each captured on first sight and replayed after. The mask is read live: a mask that
hides some prompt tokens replays the all-ones mask's graph, bit-equal to eager, and changes eager's
output. CPU stand-in here; test_full_size_cuda.py samples the full model. ComfyUI 0.8.0 has no
Lens: these tests skip there.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/lens.py``. 48 blocks of 24 heads of 64 (1536 wide), one token per latent cell, 2x2
unpatched to 32 channels on the way out; the 4 GPT-OSS layers are split and normed per layer inside the DiT. The
tokenizer: ``comfy/text_encoders/gpt_oss.py``, ``LensGptOssTokenizer``; ``model_base.Lens.extra_conds`` passes the
mask (model_base.py:1111-1113). Read for host syncs and value-dependent branches (comfy/ldm/lens/model.py):

- ``_lens_position_ids`` (l.22-53): ``arange`` on the device from Python ints (shapes).
- ``_forward`` (l.375-490): the context is reshaped by shape; without a mask an all-ones mask is
  made on the device (l.412-415); ``_build_joint_attention_mask`` (l.499-507) turns the mask into
  an additive float mask with ``masked_fill_`` on a tensor it made (device ops).
- ``LensAttention`` (l.103-108) raises on a mask of the wrong shape (a shape check).
- ``control`` adds ControlNet outputs in place into the token tensor the forward made
  (l.481-486): a tensor argument like any other. ``patches`` / ``patches_replace`` make a call
  eager (options.py).
- No ``.item()``, ``.tolist()``, ``.cpu()`` or mask indexing, so mode 'full' is safe.
  ``LensTransformer2DModel.forward`` (l.366) runs ``_forward`` through the DIFFUSION_MODEL
  ``WrapperExecutor``.
"""

import pytest
import torch
from bcg_testing import (
    check_conditioning_inputs_are_read_live,
    check_each_prompt_length_is_its_own_graph,
    check_gpu_verification_state,
)

pytestmark = pytest.mark.comfy
FAMILY = "lens"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_each_prompt_length_is_its_own_graph(pack, model, standin_graphs):
    check_each_prompt_length_is_its_own_graph(pack[1], model, FAMILY)


def test_the_attention_mask_is_read_live(pack, model, standin_graphs):
    """Seed 1: the encoder's all-ones mask over the 40-token positive; seed 2: its last 8 tokens
    masked. At cfg 1 the DiT sees the positive alone (the negative is never called)."""

    def mask(seed):
        m = torch.ones(1, 40, dtype=torch.long)
        if seed != 1:
            m[:, -8:] = 0
        return {"attention_mask": m}

    check_conditioning_inputs_are_read_live(pack[1], model, FAMILY, mask)
