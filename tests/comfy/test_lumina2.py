"""Lumina 2 (``Lumina2``): the adapter inside real ComfyUI, on a depth-1 Lumina-Image-2.0 model.

Captions reach the DiT unpadded (Gemma-2-2B does not pad, this NextDiT has no pad tokens), so each
caption length is its own signature: cond and uncond of different lengths run as two batch-1
calls, each replaying its own graph, and equal lengths batch into one call. Until its GPU
exactness test has passed on the H200 the family stays off for users unless they opt in.
CPU stand-in here; test_full_size_cuda.py samples the full-depth model at 512² and 1024².
Lumina2 exists in ComfyUI 0.8.0 and 0.33.0: these tests run on both.
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
