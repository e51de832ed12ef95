"""CogVideoX (``CogVideoX_T2V``, ``CogVideoX_I2V``, ``CogVideoX_Inpaint``): the adapter inside real
ComfyUI, each class on its depth-1 model at CogVideoX-5B's width (3072, 48 heads), random weights
in the real key layout, 64x64 px x 5 frames (2 latent frames).

T5-XXL pads every prompt to 226 tokens, so cond and uncond batch into one call (``b2``) and one
graph serves every prompt at a size. Image-to-video and inpainting add the start image (16) and
the masked video with its mask (32) as channels of ``x`` (``concat_latent_image``): other values
replay the same graph, bit-equal to eager, and change eager's output. CPU stand-in here;
test_full_size_cuda.py samples each recipe. ComfyUI 0.8.0 has no CogVideoX: these tests skip there.
"""

import gc

import pytest
import torch
from bcg_testing import (
    check_conditioning_inputs_are_read_live,
    check_gpu_verification_state,
    check_padded_prompts_batch_cond_and_uncond,
    skip_unless_host_builds,
)

from bench import synthetic

pytestmark = pytest.mark.comfy
FRAMES = 5
T, H, W = 2, 8, 8  # the latent of 64x64 px x 5 frames


@pytest.fixture(scope="module")
def recipe_model():
    """``recipe_model(recipe)``: that recipe's depth-1 model, one held at a time."""
    held = {}

    def get(recipe):
        if recipe not in held:
            held.clear()
            gc.collect()
            skip_unless_host_builds(recipe)
            held[recipe] = synthetic.load_model(recipe, depth=1, seed=0)
        return held[recipe]

    yield get
    held.clear()
    gc.collect()


def _latent(seed, channels):
    return {"concat_latent_image": torch.randn(1, channels, T, H, W, generator=torch.Generator().manual_seed(seed))}


def test_served_without_opt_in_once_verified_on_the_h200(pack, recipe_model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], recipe_model("cogvideox"), "cogvideox", monkeypatch)


def test_every_prompt_is_226_tokens_so_cond_and_uncond_share_one_graph(pack, recipe_model, standin_graphs):
    check_padded_prompts_batch_cond_and_uncond(
        pack[1], recipe_model("cogvideox"), "cogvideox", frames=(FRAMES,), shapes=[(1, 16, T, H, W)], length=226
    )


@pytest.mark.parametrize("recipe, channels", [("cogvideox_i2v", 16), ("cogvideox_inpaint", 32)], ids=["i2v", "inpaint"])
def test_the_concatenated_image_channels_are_read_live(pack, recipe_model, standin_graphs, recipe, channels):
    check_conditioning_inputs_are_read_live(
        pack[1], recipe_model(recipe), recipe, lambda seed: _latent(seed, channels), frames=FRAMES
    )
