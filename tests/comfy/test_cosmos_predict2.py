"""Cosmos-Predict2 text-to-image (``CosmosT2IPredict2``): the adapter inside real ComfyUI, on a
depth-1 2B-shaped model at the real width (2048; one block).

The T5 tokenizer pads every prompt to 512 tokens, so cond and uncond arrive equally long and batch
into one call (``txt512 b2``), and cfg 1 sends the positive alone (``b1``): two graphs per size. An
image is one latent frame (Wan 2.1's 5-D latent, T = 1), labelled without frames. A tensor ``fps``
(which the RoPE would compare on the host) runs eager with the reason. The family stays off for
users until its GPU exactness test has passed, unless they opt in. CPU stand-in here;
test_full_size_cuda.py samples the full model. Cosmos-Predict2 exists in ComfyUI 0.8.0 and 0.33.0:
these tests run on both.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/cosmos_predict2.py``. The 2B checkpoint: 28 blocks of 2048 (16 heads of 128) with
AdaLN-LoRA (256), self-attention with 3-D RoPE over the patches, cross-attention to a T5-XXL context (1024), Wan
2.1's latent (16 channels at 8x, 5-D; an image is one frame: ``fix_empty_latent_channels`` unsqueezes T = 1), a
padding-mask channel concatenated inside the forward. The T5 tokenizer pads with ``min_length=512``, padding
rows zeroed by the encoder; ``model_base.CosmosPredict2`` drops the mask. Read for host syncs and
value-dependent branches (comfy/ldm/cosmos/):

- ``position_embedding.py:137`` ``fps.min() == fps.max()`` would sync for a tensor ``fps``.
  ``model_base.CosmosPredict2`` sends ``fps`` as a ``CONDConstant`` of the conditioning's
  ``frame_rate``: None for text-to-image, else a Python number (in the key, like every plain
  argument; detection turns fps modulation off, so ``:145`` never uses it). A tensor ``fps`` is
  refused (``CosmosPredict2Adapter.refusal``).
- ``predict2.py:806`` the padding mask: ``model_base`` never passes one, so it is zeros built from
  shapes; ``:879`` ``timesteps.ndim`` (5-D ``denoise_mask`` makes ``process_timestep`` send
  ``[B, T]`` timesteps): shapes. ``denoise_mask`` itself reaches ``_forward`` as an unused keyword
  argument, a tensor whose shape is in the key.
- ``predict2.py:918`` fp16 residual stream in float32: the dtype, in the key.
- ``predict2.py:887-889`` ``self.affline_scale_log_info``, ``self.affline_emb``,
  ``self.crossattn_emb`` are stored on the module "for logging"; nothing in ComfyUI reads them (a
  replay leaves them pointing at the capture's tensors). Being new tensors after every call, they
  would read as moved weights at each run's address check and drop every graph: the adapter names
  them ``forward_scratch_attributes``, which the check leaves out.
- ``predict2.py:161``, ``:584``, ``:898`` ``attn1_patch`` / ``attn2_patch`` / ``mlp_patch`` /
  ``post_input`` patches: any patch makes the call eager (``options.py``). ``:922``
  ``block_index`` is bookkeeping.
- ``predict2.py:187`` ``comfy_kitchen`` ``rms_rope_split_half``: backend from shapes and dtypes;
  0.8.0 computes the rotation in plain torch. ``position_embedding.py`` buffers move with the model.
- No op syncs with the host, so mode 'full' is safe. ``forward`` runs ``_forward`` through the
  DIFFUSION_MODEL ``WrapperExecutor`` in both hosts (0.33.0 ``predict2.py:839``).
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

from bcg_runtime.comfy.models.cosmos_predict2 import TENSOR_FPS_REFUSAL

pytestmark = pytest.mark.comfy
FAMILY = "cosmos_predict2"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_padded_prompts_batch_cond_and_uncond_and_replay_exactly(pack, model, standin_graphs):
    check_padded_prompts_batch_cond_and_uncond(pack[1], model, FAMILY, shapes=((1, 16, 1, 8, 8),))


def test_a_tensor_fps_runs_eager_with_the_reason(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    positive, _ = conds(FAMILY)
    cond = [[positive[0][0], {**positive[0][1], "frame_rate": torch.tensor([24.0])}]]
    out, eager = sample_both(FAMILY, bcg_model, model, 64, 64, 2, 1.0, cond, cond, seed=3)
    assert torch.equal(out, eager)
    run = session_of(bcg_model).last_run
    assert run["eager"] == {TENSOR_FPS_REFUSAL: 2} and run["replayed"] == 0, run


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    check_an_unwarmed_size_falls_back_with_its_label(pack[1], model, FAMILY, tokens=512)
