"""FLUX.1 Fill (``FluxInpaint``): the FLUX.1 forward with 96 input channels, inside real ComfyUI,
on a depth-1 FLUX.1-dev-shaped model (hidden 3072, one double and one single block).

What the class adds is channels of ``x``: the masked image's latent and the mask folded 8x8
(``model_base.Flux.concat_cond``), from ``InpaintModelConditioning``'s ``concat_latent_image`` and
``concat_mask`` or from the latent's noise mask. They are built before the DiT call, so new values
replay the same graph (read live, bit-equal to eager), and without them (zeros and ones) the call
has the same shapes: the same graph again. The family stays off for users until its GPU
exactness test passed. CPU stand-in here; test_full_size_cuda.py samples the real width, and
``test_the_inpaint_inputs_are_bit_exact_on_cuda`` runs these checks on the H200. Both hosts
(0.8.0 and 0.33.0) have the class.
"""

import pytest
import torch
from bcg_testing import (
    check_gpu_verification_state,
    check_inputs_are_read_live,
    release_cuda_memory,
    session_of,
    skip_unless_host_builds,
)

from bench import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "flux_fill"


def _randn(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _mask(seed, *shape):
    return (torch.rand(*shape, generator=torch.Generator().manual_seed(seed + 50)) > 0.5).float()


def inpaint(width=64, height=64):
    """seed -> what InpaintModelConditioning adds: the masked image's latent and the pixel mask."""
    return lambda seed: {
        "concat_latent_image": _randn(seed, 1, 16, height // 8, width // 8),
        "concat_mask": _mask(seed, 1, 1, height, width),
    }


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_the_masked_image_and_mask_are_read_live(pack, model, standin_graphs):
    """New image and mask values replay the first graph, bit-equal to eager; a call without them
    (zeros and ones, 96 channels all the same) is the same signature and replays it too."""
    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    check_inputs_are_read_live(FAMILY, model, bcg_model, inpaint(), other={}, other_is_new=False)


def test_the_latent_noise_mask_is_the_mask_channels_when_the_conditioning_has_none(pack, model, standin_graphs):
    """With the image in the conditioning and the mask only on the latent (``noise_mask``), the
    mask channels come from the sampler's denoise mask: read live as well."""
    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    image = inpaint()
    check_inputs_are_read_live(
        FAMILY, model, bcg_model, lambda seed: {"concat_latent_image": image(seed)["concat_latent_image"]},
        noise_mask=lambda seed: _mask(seed, 1, 1, 64, 64),
    )  # fmt: skip
    assert session_of(bcg_model).runner.stats.captures == 1


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"
)
def test_the_inpaint_inputs_are_bit_exact_on_cuda():
    """The real width at the recipe's ``gpu_test_depth`` (the full depth), 1024x1024, the same
    checks as the CPU test, through bcg_runtime.comfy.api (the GPU image has no PyAV)."""
    from bcg_runtime.comfy import api

    skip_unless_host_builds(FAMILY)
    model = synthetic.load_model(FAMILY, depth=synthetic.family_info(FAMILY).gpu_test_depth, seed=0, device="cuda")
    try:
        bcg_model = api.apply(model, "auto")
        check_inputs_are_read_live(
            FAMILY, model, bcg_model, inpaint(1024, 1024), other={}, other_is_new=False, width=1024, height=1024
        )
    finally:
        del model
        release_cuda_memory(unload=True)
