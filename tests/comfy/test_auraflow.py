"""AuraFlow (``AuraFlow``): the adapter inside real ComfyUI, on a model of one double and one single
block at the real width (3072, 12 heads), random weights in the real key layout.

Pile-T5 pads every prompt to 256 tokens, so cond and uncond batch into one call (``b2``) and one
graph serves every prompt at a size; cfg 1 is the batch-1 signature. The timestep embedding's
host-built ``arange`` is staged (``stage_host_copies``): the capture would refuse it otherwise.
CPU stand-in here; test_full_size_cuda.py samples the full model (0.8.0 and 0.33.0 both have it).
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
