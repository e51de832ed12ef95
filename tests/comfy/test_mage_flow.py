"""Mage-Flow (``MageFlow``): the adapter inside real ComfyUI, on a depth-1 model at the real width
(3072, 24 heads), random weights in the real key layout, on the FLUX.2 latent (128 channels, 16x).

Prompts reach the DiT at their exact length: cond and uncond of two lengths are two batch-1
signatures, each captured on first sight and replayed after. An edit call's reference latent is
read live (other images of its size replay the same graph and change eager's output) and is a
signature of its own. CPU stand-in here; test_full_size_cuda.py samples the full model. ComfyUI
0.8.0 has no MageFlow: these tests skip there.
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
