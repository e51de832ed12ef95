"""ERNIE-Image (``ErnieImage``): the adapter inside real ComfyUI, on a depth-1 model at the real
width (hidden 4096; detection fixes the depth, so the synthetic load sets it).

Captions reach the DiT unpadded and the image positions follow them, so each caption length is its
own signature: cond and uncond of different lengths run as two batch-1 calls, each replaying its
own graph. The class has no ``_forward``: these tests also show BCG sees its calls (through the
``diffusion_model.forward`` object patch). Until its GPU exactness test has passed on the H200 the
family stays off for users unless they opt in. CPU stand-in here; test_full_size_cuda.py samples
the full model. ComfyUI 0.8.0 has no ERNIE-Image: these tests skip there.
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
