"""AuraFlow (``AuraFlow``): the adapter inside real ComfyUI, on a model of one double and one single
block at the real width (3072, 12 heads), random weights in the real key layout.

Pile-T5 pads every prompt to 256 tokens, so cond and uncond batch into one call (``b2``) and one
graph serves every prompt at a size; cfg 1 is the batch-1 signature. The timestep embedding's
host-built ``arange`` is staged (``stage_host_copies``): the capture would refuse it otherwise.
CPU stand-in here; test_full_size_cuda.py samples the full model (0.8.0 and 0.33.0 both have it).

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/auraflow.py``. An MMDiT of 3072 wide (12 heads of 256): 4 joint (double) blocks then 32
single blocks over the concatenated text and image tokens, 2x2 patches of the SDXL latent (4 channels, 8x), a
learned positional table of ``max_seq`` entries (96x96 for v0.2/v0.3) and 8 register tokens before the text. The
detection reads only ``max_seq``, ``cond_seq_dim`` and the block counts (model_detection.py:188-196): width and
heads are the class's defaults. The tokenizer: ``comfy/text_encoders/aura_t5.py:14``, ``min_length=256``, pad
token 1. Read for host syncs and value-dependent branches (comfy/ldm/aura/mmdit.py):

- ``TimestepEmbedder.timestep_embedding`` (l.286-297): ``torch.arange(half)`` is built on the
  host and copied to the device (``.to(t.device)``) every call: a pageable copy, which capture
  refuses. Its value is a function of ``frequency_embedding_size`` (256, the config) alone, so
  ``stage_host_copies`` stages it through a pinned buffer the graph holds; the proof replay would
  show a value that was not constant.
- ``apply_pos_embeds`` (l.422-437): the table is sliced (and, for a latent wider than the table,
  interpolated) by Python ints from ``x.shape``: shapes, in the key.
- ``patchify`` / ``unpatchify`` (l.409, l.400): shapes. ``_forward`` branches on
  ``len(self.double_layers)`` / ``len(self.single_layers)`` (the loaded model) and on
  ``patches_replace`` (options.py makes such calls eager).
- No ``.item()``, ``.tolist()``, ``.cpu()`` or mask indexing, so mode 'full' is safe.
  ``MMDiT.forward`` (l.439) runs ``_forward`` through the DIFFUSION_MODEL ``WrapperExecutor``.
"""

import pytest
from bcg_testing import (
    check_an_unwarmed_size_falls_back_with_its_label,
    check_gpu_verification_state,
    check_padded_prompts_batch_cond_and_uncond,
)

pytestmark = pytest.mark.comfy
FAMILY = "auraflow"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_every_prompt_is_256_tokens_so_cond_and_uncond_share_one_graph(pack, model, standin_graphs):
    check_padded_prompts_batch_cond_and_uncond(pack[1], model, FAMILY, length=256)


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    check_an_unwarmed_size_falls_back_with_its_label(pack[1], model, FAMILY, tokens=256, batch=2)
