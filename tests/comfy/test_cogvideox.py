"""CogVideoX (``CogVideoX_T2V``, ``CogVideoX_I2V``, ``CogVideoX_Inpaint``): the adapter inside real
ComfyUI, each class on its depth-1 model at CogVideoX-5B's width (3072, 48 heads), random weights
in the real key layout, 64x64 px x 5 frames (2 latent frames).

T5-XXL pads every prompt to 226 tokens, so cond and uncond batch into one call (``b2``) and one
graph serves every prompt at a size. Image-to-video and inpainting add the start image (16) and
the masked video with its mask (32) as channels of ``x`` (``concat_latent_image``): other values
replay the same graph, bit-equal to eager, and change eager's output. CPU stand-in here;
test_full_size_cuda.py samples each recipe. ComfyUI 0.8.0 has no CogVideoX: these tests skip there.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/cogvideox.py``. The channels of ``x`` are built by ``model_base.CogVideoX.concat_cond``
(model_base.py:2798-2837: zeros where the conditioning has no ``concat_latent_image``). CogVideoX 1.0 patches 2x2
with a Conv2d, 1.5 2x2x2 with a Linear (``patch_size_t``, detection model_detection.py:659-667); RoPE or a learned
positional table (present in the checkpoint or not, :678-684). Each class's synthetic-checkpoint recipe is in
``bench/recipes/`` under its module's name. The tokenizer: ``comfy/text_encoders/cogvideo.py:13``,
``min_length=226``. Read for host syncs and value-dependent branches (comfy/ldm/cogvideo/model.py):

- ``get_timestep_embedding`` (l.49-58), ``_get_1d_rotary_pos_embed`` (l.18-24),
  ``get_3d_sincos_pos_embed`` (l.61-81) and ``_get_rotary_emb`` (l.516-573): ``arange`` /
  ``linspace`` made on the device from Python numbers (shapes and the config); nothing copied
  from the host.
- ``CogVideoXPatchEmbed.forward`` (l.158-199): the learned table is sliced by the patch count
  (a shape); ``joint_pos[:, text_seq_length:] = image_pos`` writes a tensor the forward just made.
- ``_forward`` (l.444-513): ``ofs`` (CogVideoX 1.5 I2V's ``torch.full`` from ``extra_conds``,
  model_base.py:2841-2847) is a tensor argument, in the key by shape and presence; padding,
  patching and unpatchifying follow shapes.
- No ``.item()``, ``.tolist()``, ``.cpu()`` or mask indexing, so mode 'full' is safe.
  ``CogVideoXTransformer3DModel.forward`` (l.435) runs ``_forward`` through the DIFFUSION_MODEL
  ``WrapperExecutor``.
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
