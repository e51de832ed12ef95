"""JoyImage (``JoyImage``): the adapter inside real ComfyUI, on a depth-1 model at the real width
(3072, 24 heads), random weights in the real key layout, on the Wan 2.1 latent (16 channels, 8x, 5-D).

Prompts reach the DiT at their exact length: cond and uncond of two lengths are two batch-1
signatures, each captured on first sight and replayed after. An edit call's reference latent is
read live (other images of its size replay the same graph and change eager's output) and is a
signature of its own. CPU stand-in here; test_full_size_cuda.py samples the full model. ComfyUI
0.8.0 has no JoyImage: these tests skip there.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/joyimage.py``. 24 heads of 128, 3072 wide, 1x2x2 patches, a Qwen3-VL-8B context
(4096). Edit calls carry ``ref_latents`` (``model_base.JoyImage.extra_conds``, model_base.py:2524-2526): their
tokens follow the target's, each with its own temporal RoPE band. Read for host syncs and value-dependent
branches (comfy/ldm/joyimage/model.py):

- ``_get_rotary_pos_embed_for_range`` / ``get_rotary_pos_embed_for_components`` (l.315-355):
  ``arange`` on the device from Python ints (the components' patch grids: shapes).
- ``_forward`` (l.382-454): a Python loop over ``[hidden_states, *ref_latents]`` (the list's
  length in the key), ``pad_to_patch_size`` and the target's token count from shapes.
- ``JoyImageAttention`` (l.78-131): q/k RMSNorm and RoPE in one ``comfy_kitchen.rms_rope`` op, a
  kernel launched on the current stream (captured like any other); ``cast_bias_weight`` /
  ``uncast_bias_weight`` cast the norm weights (no offload stream outside lowvram, which BCG
  refuses).
- No ``.item()``, ``.tolist()``, ``.cpu()`` or mask indexing, so mode 'full' is safe.
  ``JoyImageTransformer3DModel.forward`` (l.365) runs ``_forward`` through the DIFFUSION_MODEL
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
FAMILY = "joyimage"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_each_prompt_length_is_its_own_graph(pack, model, standin_graphs):
    check_each_prompt_length_is_its_own_graph(pack[1], model, FAMILY)


def test_an_edit_reference_latent_is_read_live_and_a_signature_of_its_own(pack, model, standin_graphs):
    def reference(seed):
        return {"reference_latents": [synthetic.make_reference_latent(FAMILY, 64, 48, seed=seed)]}

    check_conditioning_inputs_are_read_live(pack[1], model, FAMILY, reference, absent_is_another_signature=True)
