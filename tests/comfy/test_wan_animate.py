"""Wan 2.2 Animate (``WAN22_Animate``): the adapter inside real ComfyUI, through ``comfy.sample.sample``
with the inputs WanAnimateToVideo puts in the conditioning: the start image and its mask, CLIP
features, the pose video's latent and the face video (512x512 px a frame).

The class is detected by its first face-adapter block, and the adapter has a block for every 5
transformer blocks: the test model has 5 blocks, the fewest ComfyUI detects as Animate. On the
CPU it is Wan 2.1 1.3B's width (1536, 12 heads), a test recipe beside the real one (14B: five
blocks of it would hold about 9 GiB while loading on a shared CPU machine); the same forward
runs, face adapter, motion encoder and its QR included. The first call is captured and the
second replayed, bit-equal to eager; other pose and face videos replay the same graph, bit-equal
to eager, and change eager's output; without them (outside the pose window) the call is another
signature. On CUDA, ``test_the_animate_inputs_are_bit_exact_on_cuda`` runs the same checks at the
real width (14B, 5 blocks), the capture of ``torch.linalg.qr`` included; test_full_size_cuda.py
picks the real recipe up by itself (plain prompts).

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/wan_animate.py``: Wan's I2V forward (``wan.py``: the start image and mask as channels
of ``x``, CLIP features as ``clip_fea``, umT5 padded to 512 tokens) with two more inputs, both from
``WAN22_Animate.extra_conds`` (model_base.py:1808-1818) as tensor arguments, in the key by shape and presence and
read live at every replay (comfy/ldm/wan/model_animate.py):

- ``pose_latents`` (the pose video's latent): embedded by ``pose_patch_embedding`` and added in
  place into the patch tokens of frames 1.. (``after_patch_embedding``, model_animate.py:452-454),
  a tensor the forward just made; the slice bounds are shapes.
- ``face_pixel_values`` (the face video, 512x512 px a frame): the motion encoder runs over it in
  batches of 8 frames (l.463-464: ``range(math.ceil(frames / 8))``, a shape), then the face
  encoder, and the result is padded or cut to the latent frame count (l.471-480, shapes); every
  fifth block adds a face-adapter block's output (l.549-550, ``i % 5``: the block index). The
  padding zeros are made on the host and moved by ``type_as`` (l.472, l.477): host-built constants
  of shapes alone, staged like ``sinusoidal_embedding_1d``'s ``arange`` (``stage_host_copies``,
  every Wan variant's). ``Direction.forward`` (l.378-383) orthonormalises a weight with
  ``torch.linalg.qr`` in every call with a face video: a cuSOLVER kernel on CUDA; were the capture
  to refuse it, that shape's capture fails and its calls run eager with the reason (a failed
  capture is never stored), which the H200 test shows.
- ComfyUI tells the checkpoint apart by ``face_adapter.fuser_blocks.0.k_norm.weight``
  (model_detection.py:758-759), and the adapter has ``num_layers // 5`` blocks (l.440): a checkpoint
  of fewer than 5 blocks is detected as plain I2V, so the recipe's ``smallest_depth`` is 5.
- No ``.item()``, ``.tolist()`` or ``.cpu()`` in the forward; ``WanModel.forward`` runs it through the
  DIFFUSION_MODEL ``WrapperExecutor``.
"""

import dataclasses
import gc
from types import SimpleNamespace

import pytest
import torch
from bcg_testing import (
    check_conditioning_inputs_are_read_live,
    check_gpu_verification_state,
    conds,
    release_cuda_memory,
    skip_unless_host_builds,
)

from bench import synthetic
from bench.recipes import wan_animate
from bench.recipe import frozen_config

pytestmark = pytest.mark.comfy
T, H, W = 2, 8, 8  # the latent of 64x64 px x 5 frames
FRAMES = 5

#: The test recipe: Wan 2.2 Animate's layout at Wan 2.1 1.3B's width.
NARROW = dataclasses.replace(
    wan_animate.RECIPE,
    name="wan_animate_narrow",
    title="Wan 2.2 Animate at 1.3B width (tests)",
    hidden_size=1536,
    num_heads=12,
    config=frozen_config({**wan_animate.RECIPE.config, "dim": 1536, "num_heads": 12, "ffn_dim": 8960}),
)


def _randn(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def animate_inputs(seed):
    """WanAnimateToVideo's entries (nodes_wan.py:1186-1210) for 5 frames at 64x64 px."""
    mask = torch.cat([torch.zeros(1, 1, 1, H, W), torch.ones(1, 1, T - 1, H, W)], dim=2)
    return {
        "concat_latent_image": _randn(seed, 1, 16, T, H, W),
        "concat_mask": mask,
        "clip_vision_output": SimpleNamespace(penultimate_hidden_states=_randn(seed + 1, 1, 257, 1280)),
        "pose_video_latent": _randn(seed + 2, 1, 16, T, H, W),
        "face_video_pixels": _randn(seed + 3, 1, 3, FRAMES, 512, 512).clamp(-1, 1),
    }


@pytest.fixture(scope="module")
def narrow_model():
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(synthetic.FAMILIES, NARROW.name, NARROW)
        skip_unless_host_builds(NARROW.name)
        model = synthetic.load_model(NARROW.name, depth=NARROW.smallest_depth, seed=0)
        yield model
        del model
        gc.collect()


def test_a_checkpoint_of_fewer_than_5_blocks_is_not_animate(pack):
    """Why ``smallest_depth`` is 5: at 4 blocks the face adapter has none, and ComfyUI detects the
    layout as another Wan variant."""
    skip_unless_host_builds("wan_animate")
    for depth, expected in ((4, False), (5, True)):
        sd = {
            k: torch.empty(s, device="meta") for k, s in synthetic.state_dict_shapes("wan_animate", depth=depth).items()
        }
        cls, _ = synthetic.detect_family_class(sd)
        assert (cls == "WAN22_Animate") is expected, (depth, cls)


def test_stays_off_until_its_gpu_test_passed(pack, narrow_model, standin_graphs, monkeypatch):
    def sample(m):
        positive, negative = ([[c, {**o, **animate_inputs(1)}] for c, o in cond] for cond in conds(NARROW.name))
        return synthetic.sample(m, NARROW.name, 64, 64, 2, 2.0, positive, negative, seed=3, frames=FRAMES)

    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(synthetic.FAMILIES, NARROW.name, NARROW)
        check_gpu_verification_state(pack[1], narrow_model, "wan_animate", monkeypatch, sample=sample)


def test_the_pose_and_face_videos_are_read_live(pack, narrow_model, standin_graphs):
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(synthetic.FAMILIES, NARROW.name, NARROW)
        check_conditioning_inputs_are_read_live(
            pack[1], narrow_model, NARROW.name, animate_inputs, frames=FRAMES, absent_is_another_signature=True
        )


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="needs a CUDA GPU (gpu layer): the real width and the QR's capture on cuSOLVER",
)
def test_the_animate_inputs_are_bit_exact_on_cuda():
    """Through bcg_runtime.comfy.api (the GPU image has no PyAV for the node shells)."""
    from bcg_runtime.comfy import api

    skip_unless_host_builds("wan_animate")
    model = synthetic.load_model("wan_animate", depth=wan_animate.RECIPE.smallest_depth, seed=0, device="cuda")
    try:
        bcg_model = api.apply(model, "auto")
        check_conditioning_inputs_are_read_live(
            None,
            model,
            "wan_animate",
            animate_inputs,
            frames=FRAMES,
            absent_is_another_signature=True,
            bcg_model=bcg_model,
        )
    finally:
        del model
        release_cuda_memory(unload=True)
