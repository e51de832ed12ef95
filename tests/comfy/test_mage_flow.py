"""Mage-Flow (``MageFlow``): the adapter inside real ComfyUI, on a depth-1 model at the real width
(3072, 24 heads), random weights in the real key layout, on the FLUX.2 latent (128 channels, 16x).

Prompts reach the DiT at their exact length: cond and uncond of two lengths are two batch-1
signatures, each captured on first sight and replayed after. An edit call's reference latent is
read live (other images of its size replay the same graph and change eager's output) and is a
signature of its own. CPU stand-in here; test_full_size_cuda.py samples the full model. ComfyUI
0.8.0 has no MageFlow: these tests skip there.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/mage_flow.py``. 24 heads of 128, 3072 wide, a Qwen3-VL-4B context (2560), unrotated
text tokens. ``ref_latents`` is the ReferenceLatent node's ``reference_latents`` (``model_base.QwenImage.extra_conds``
l.2480-2485). The encoder drops its mask when nothing is masked (``comfy/text_encoders/mage_flow.py:82-84``). Read
for host syncs and value-dependent branches (comfy/ldm/mage_flow/model.py):

- ``MageTimestepProjEmbeddings.forward`` (l.24-32): the frequency table is an ``arange`` on the
  timestep's device; ``model_base.MageFlow.process_timestep`` casts the timestep to bf16 (a
  device op).
- ``process_img`` (l.82-92): position ids from ``arange`` on the device and Python ints from the
  shape; the reference loop (l.108-117) runs over the list (its length in the key) and writes
  ``transformer_options["reference_image_num_tokens"]`` (bookkeeping in options.py).
- l.102-103: an integer attention mask becomes an additive float mask on the device.
- ``QwenImageTransformerBlock`` (comfy/ldm/qwen_image/model.py) is Qwen-Image's block, served by
  the Qwen-Image adapter. ``control`` adds ControlNet outputs in place into the token tensor the
  forward made (l.170-175): a tensor argument like any other.
- No ``.item()``, ``.tolist()``, ``.cpu()`` or mask indexing, so mode 'full' is safe.
  ``MageFlowTransformer2DModel.forward`` (l.94) runs ``_forward`` through the DIFFUSION_MODEL
  ``WrapperExecutor``.
"""

import pytest
from bcg_testing import (
    check_conditioning_inputs_are_read_live,
    check_each_prompt_length_is_its_own_graph,
    check_gpu_verification_state,
)

from bench import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "mage_flow"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_each_prompt_length_is_its_own_graph(pack, model, standin_graphs):
    check_each_prompt_length_is_its_own_graph(pack[1], model, FAMILY)


def test_an_edit_reference_latent_is_read_live_and_a_signature_of_its_own(pack, model, standin_graphs):
    def reference(seed):
        return {"reference_latents": [synthetic.make_reference_latent(FAMILY, 64, 48, seed=seed)]}

    check_conditioning_inputs_are_read_live(pack[1], model, FAMILY, reference, absent_is_another_signature=True)
