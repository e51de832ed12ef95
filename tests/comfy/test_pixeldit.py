"""PixelDiT (``PixelDiTT2I``) and PiD (``PiD``): the adapter inside real ComfyUI, each on its model of
one patch block and one pixel block at the real width (1536, 24 heads), random weights in the
released key layout (``core.`` prefix for PixelDiT, fused pixel-block modulation), on RGB pixels.

Every prompt reaches the DiT as 300 tokens, so cond and uncond batch into one call (``b2``) and
one graph serves every prompt at a size. PiD's low-quality latent and ``degrade_sigma`` (the
PiDConditioning node's entries) are read live: other values replay the same graph, bit-equal to
eager, and change eager's output. CPU stand-in here; test_full_size_cuda.py samples both recipes.
ComfyUI 0.8.0 has neither class: these tests skip there.
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


def test_the_released_layout_is_what_comfyui_detects_and_splits(pack):
    """The file's keys differ from the module tree's (``core.`` prefix, one fused modulation Linear
    per pixel block): ComfyUI detects that layout as PixelDiTT2I and its
    ``process_unet_state_dict`` gives back exactly the module tree's keys and shapes (the values'
    round trip is checked by every load: ``synthetic.load_model`` compares each loaded key)."""
    import comfy.supported_models

    skip_unless_host_builds("pixeldit")
    info = synthetic.family_info("pixeldit")
    tree = synthetic.state_dict_shapes("pixeldit", depth=1)
    released = info.checkpoint_layout(info, {k: torch.empty(s, dtype=torch.bfloat16) for k, s in tree.items()})
    assert "core.pixel_embedder.proj.weight" in released and not any(".adaLN_modulation_msa." in k for k in released), (
        sorted(released)[:5]
    )
    cls, _ = synthetic.detect_family_class({k: v.to("meta") for k, v in released.items()})
    assert cls == "PixelDiTT2I"
    split = comfy.supported_models.PixelDiTT2I({"image_model": "pixeldit_t2i"}).process_unet_state_dict(released)
    assert {k: tuple(v.shape) for k, v in split.items()} == tree


def test_served_without_opt_in_once_verified_on_the_h200(pack, recipe_model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], recipe_model("pixeldit"), "pixeldit", monkeypatch)


def test_every_prompt_is_300_tokens_so_cond_and_uncond_share_one_graph(pack, recipe_model, standin_graphs):
    check_padded_prompts_batch_cond_and_uncond(
        pack[1], recipe_model("pixeldit"), "pixeldit", shapes=[(1, 3, 64, 64)], length=300
    )


def test_pid_reads_its_low_quality_latent_and_degrade_sigma_live(pack, recipe_model, standin_graphs):
    def lq(seed):
        gen = torch.Generator().manual_seed(seed)
        return {"lq_latent": torch.randn(1, 16, 2, 2, generator=gen), "degrade_sigma": torch.tensor([0.1 * seed])}

    check_conditioning_inputs_are_read_live(pack[1], recipe_model("pixeldit_pid"), "pixeldit_pid", lq)
