"""ERNIE-Image (``ErnieImage``): the adapter inside real ComfyUI, on a depth-1 model at the real
width (hidden 4096; detection fixes the depth, so the synthetic load sets it).

Captions reach the DiT unpadded and the image positions follow them, so each caption length is its
own signature: cond and uncond of different lengths run as two batch-1 calls, each replaying its
own graph. The class has no ``_forward``: these tests also show BCG sees its calls (through the
``diffusion_model.forward`` object patch). Until its GPU exactness test has passed on the H200 the
family stays off for users unless they opt in. CPU stand-in here; test_full_size_cuda.py samples
the full model. ComfyUI 0.8.0 has no ERNIE-Image: these tests skip there.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/ernie_image.py``. Image and text tokens concatenated (image first) through 36
shared-AdaLN blocks, hidden 4096, 32 heads of 128, feed-forward 12288, patch 1, a Ministral-3-3B caption (hidden
layer -2, 3072 wide). Detection (``model_detection.py:1112``) returns only ``image_model``: every size is the
class's default, so a reduced-depth test model gets its layer count at load (``FamilyInfo.depth_fixed_by_detection``).
The Mistral-3 tokenizer does not pad (``pad_to_max_length=False``); the image tokens' RoPE time index is the
caption's length (``model.py:261``); ``c_crossattn`` is a ``CONDRegular``. Read for host syncs and
value-dependent branches (``comfy/ldm/ernie/model.py``):

- ``:13`` ``rope`` computes in float64 on the CPU where the device has no float64 (MPS, XPU,
  DirectML): a device round trip. CUDA has float64, so on CUDA it stays on the device.
- ``:253`` ``text_bth.numel() > 0``: a shape. ``:259-279`` text and image position ids from
  ``torch.linspace`` over Python numbers (shapes and ``rope_options``, which is in the key).
- ``:115`` ``comfy_kitchen`` ``rms_rope_split_half``: the backend is picked from shapes, strides and
  dtypes, no host read; ``in_training`` is a process flag.
- ``:130`` attention without a mask (the block is never given one).
- ``:294`` the layer loop and ``:299`` the image slice: counts from the config and shapes.
- No op syncs with the host, so mode 'full' is safe. The class has no ``_forward``: its ``forward``
  never runs ComfyUI's DIFFUSION_MODEL wrappers (hence ``wrappers._ForwardThroughBCG``).
"""

import pytest
from bcg_testing import (
    check_an_unwarmed_size_falls_back_with_its_label,
    check_each_prompt_length_is_its_own_graph,
    check_gpu_verification_state,
)

from bench import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "ernie_image"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_the_depth_detection_fixes_is_set_at_load_only(model):
    """The depth-1 model has one layer, and the supported_models class is left as it was."""
    import comfy.supported_models

    assert len(model.model.diffusion_model.layers) == 1
    assert model.model.diffusion_model.hidden_size == synthetic.family_info(FAMILY).hidden_size
    assert comfy.supported_models.ErnieImage.unet_extra_config == {}


def test_each_caption_length_is_its_own_graph_and_replays_exactly(pack, model, standin_graphs):
    check_each_prompt_length_is_its_own_graph(pack[1], model, FAMILY)


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    check_an_unwarmed_size_falls_back_with_its_label(pack[1], model, FAMILY, tokens=40)
