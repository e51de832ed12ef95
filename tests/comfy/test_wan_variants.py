"""The Wan 2.x variants (VACE, Fun Control, Fun Camera 2.1 / 2.2, FlowRVS, SCAIL / SCAIL-2, HuMo,
S2V, Animate 2, WanDancer) inside real ComfyUI, each on its depth-1 model at the real width (14B), through
``comfy.sample.sample`` with the conditioning inputs the variant adds, as its nodes put them in the
conditioning.

For each variant: the first call is captured and the second replayed, bit-equal to eager; the
same inputs with other values (another control video, camera path, pose, audio, reference) replay
the same graph, bit-equal to eager, and change eager's output (the input reaches the DiT, so the
graph reads it live); and where the variant has a constant (VACE strength, SCAIL-2's mode,
WanDancer's frame rate) or an optional input, another value of it or its absence is another
signature, captured apart and exact. 64x64 px, 5 frames (2 latent frames), cfg 1 (one call per
step), CPU stand-in. A variant whose class this ComfyUI lacks is skipped with that reason
(0.8.0 has VACE, Fun Control, Camera, HuMo and S2V). On the H200,
``test_the_variants_inputs_are_bit_exact_on_cuda`` runs the same checks at the real width and the
recipe's ``gpu_test_depth`` at 832x480 x 17 frames, and ``test_full_size_cuda.py`` picks each recipe
up by itself (its plain prompts, the variant's own inputs left at ComfyUI's defaults).

Source audit (ComfyUI 0.33.0):

wan_scail (``bcg_runtime/comfy/models/wan_scail.py``): what the forward adds to Wan's (comfy/ldm/wan/model.py):

- ``reference_latent`` (the reference frames with a ones mask, stacked on time) and
  ``pose_latents`` (the pose video's latent and mask; ``WAN21_SCAIL.extra_conds``, model_base.py
  l.1953): tensor arguments, in the key by shape (present or not), values in the graph's inputs.
  ``forward_orig`` (l.1708) concatenates them and slices by their shapes.
- ``rope_encode`` (l.1790): positions from shapes (``h / H_pose`` and the shifts are Python
  numbers from shapes), the ``rope_options`` Wan's key already holds.
- SCAIL-2 adds ``sam_latents`` / ``ref_mask_latents`` (tensors, in the key by shape) and
  ``ref_mask_flag``, a ``CONDConstant`` Python bool the SCAIL-2 node sets (nodes_scail.py l.184):
  a constant in the key; ``bool(ref_mask_flag)`` (l.1798) is a host branch on that constant,
  so replacement mode (False) is its own graph.
- No host sync or value-dependent branch beyond Wan's (``wan.py``).

wan_animate2 (``bcg_runtime/comfy/models/wan_animate2.py``): what the forward adds to Wan's
(comfy/ldm/wan/model_animate2.py):

- ``pose_latents`` (the pose video's latent, one frame fewer than ``x``: frame 0 is the reference
  slot), ``clip_fea_pose`` and ``context_pose`` (``WAN_Animate2.extra_conds``, model_base.py
  l.1833): tensor arguments, in the key by shape (present or not: outside the node's pose window
  the call carries none), values in the graph's inputs. The frame check (l.292) raises on shapes.
- ``pose_strength`` / ``reference_strength``: ``CONDConstant`` Python floats, constants in the key;
  ``!= 1.0`` (l.371, l.49) are host branches on them.
- ``forward_gen`` (l.45) runs attention once per latent frame (``range(f_gen)``, a shape) into
  buffers the forward allocates (l.354): in mode breakable each is a break like any attention.
- The ``WanAnimate2Cache`` node's ``PoseBranchCache`` (l.113, ``transformer_options["animate2_cache"]``)
  keeps the pose branch's block inputs across steps and picks its slot on the host
  (``torch.equal`` l.142, ``stream.synchronize`` l.137): state across calls no graph follows.
  BCG's key does not know that entry, so such calls run eager naming it
  (``unknown transformer_options entry 'animate2_cache'``).
- ComfyUI tells the checkpoint apart only by its safetensors metadata (``transformer.model_type``
  ``animate2``, model_detection.py l.775; the layout is I2V's), which the recipe
  (``bench/recipes/wan_animate2.py``) carries.
"""

import gc
import os
import sys
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Callable

import pytest
import torch
from bcg_testing import check_gpu_verification_state, conds, release_cuda_memory, session_of, skip_unless_host_builds

from bench import synthetic

pytestmark = pytest.mark.comfy


def _randn(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _clip(seed):
    return SimpleNamespace(penultimate_hidden_states=_randn(seed, 1, 257, 1280))


@dataclass(frozen=True)
class Case:
    #: seed -> the conditioning entries the variant's nodes add (same shapes for every seed).
    inputs: Callable[[int], dict]
    #: Conditioning that must be another signature (another constant, or an input left out).
    other: dict | None = None
    #: What ``other`` changes, for the assertion message.
    other_is: str = ""
    #: seed -> the sampler's input latent instead of the empty one (FlowRVS starts from the video).
    latent: Callable[[int], torch.Tensor] | None = field(default=None)


def _make_cases(T=2, H=8, W=8):
    """The cases with inputs for ``T`` latent frames of ``H`` x ``W`` latent cells (default: 5
    pixel frames at 64x64 px, the CPU test's size)."""

    def _vace(seed):
        return {
            "vace_frames": [_randn(seed, 1, 32, T, H, W)],
            "vace_mask": [torch.rand(1, 64, T, H, W, generator=torch.Generator().manual_seed(seed))],
            "vace_strength": [1.0],
        }

    def _scail(seed):
        return {
            "reference_latents": [_randn(seed, 1, 16, 1, H, W)],
            "pose_video_latent": _randn(seed + 100, 1, 16, T, H // 2, W // 2),
        }

    def _scail2(seed):
        refs = 1
        masks = {
            "driving_mask_28ch": (_randn(seed + 200, 1, T, 28, H // 2, W // 2) > 0).float(),
            "ref_mask_28ch": (_randn(seed + 300, 1, T + refs, 28, H, W) > 0).float(),
        }
        return {**_scail(seed), **masks, "ref_mask_flag": True}

    return {
        "wan_vace": Case(
            _vace, other={**_vace(1), "vace_strength": [0.5]}, other_is="another vace_strength (a constant)"
        ),
        "wan_fun_control": Case(
            lambda seed: {"concat_latent_image": _randn(seed, 1, 32, T, H, W), "clip_vision_output": _clip(seed)},
            other={"concat_latent_image": _randn(1, 1, 32, T, H, W)},
            other_is="no CLIP features",
        ),
        "wan_camera": Case(
            lambda seed: {"camera_conditions": _randn(seed, 1, 24, T, 8 * H, 8 * W), "clip_vision_output": _clip(seed)},
            other={"clip_vision_output": _clip(1)},
            other_is="no camera path",
        ),
        "wan22_camera": Case(
            lambda seed: {
                "camera_conditions": _randn(seed, 1, 24, T, 8 * H, 8 * W),
                "concat_latent_image": _randn(seed + 1, 1, 16, T, H, W),
            },
            other={"concat_latent_image": _randn(1, 1, 16, T, H, W)},
            other_is="no camera path",
        ),
        "wan_flow_rvs": Case(lambda seed: {}, latent=lambda seed: _randn(seed, 1, 16, T, H, W)),
        "wan_scail": Case(_scail, other={"reference_latents": [_randn(1, 1, 16, 1, H, W)]}, other_is="no pose video"),
        "wan_scail2": Case(
            _scail2,
            other={**_scail2(1), "ref_mask_flag": False},
            other_is="replacement mode (ref_mask_flag False, a constant)",
        ),
        "wan_humo": Case(
            lambda seed: {
                "audio_embed": _randn(seed, 1, T, 8, 5, 1280),
                "reference_latents": [_randn(seed + 1, 1, 16, 1, H, W)],
            },
            other={"reference_latents": [_randn(2, 1, 16, 1, H, W)]},
            other_is="no audio",
        ),
        "wan_s2v": Case(
            lambda seed: {
                "audio_embed": _randn(seed, 1, 25, 1024, 4 * T),
                "reference_latents": [_randn(seed + 1, 1, 16, 1, H, W)],
                "reference_motion": _randn(seed + 2, 1, 16, 2, H, W),
                "control_video": _randn(seed + 3, 1, 16, T, H, W),
            },
            other={"audio_embed": _randn(1, 1, 25, 1024, 4 * T), "reference_latents": [_randn(2, 1, 16, 1, H, W)]},
            other_is="no motion frames or control video",
        ),
        "wan_animate2": Case(
            lambda seed: {
                "concat_latent_image": _randn(seed, 1, 16, T, H, W),
                "concat_mask": torch.cat([torch.zeros(1, 1, 1, H, W), torch.ones(1, 1, T - 1, H, W)], dim=2),
                "clip_vision_output": _clip(seed),
                "pose_video_latent": _randn(seed + 1, 1, 16, T - 1, H, W),
                "cross_attn_pose": _randn(seed + 2, 1, 512, 4096),
            },
            other={"concat_latent_image": _randn(1, 1, 16, T, H, W), "clip_vision_output": _clip(1)},
            other_is="outside the pose window (no pose latents)",
        ),
        "wan_dancer": Case(
            lambda seed: {
                "audio_embed": _randn(seed, 1, 4 * T + 1, 35),
                "clip_vision_output": _clip(seed),
                "clip_vision_output_ref": _clip(seed + 1),
                "fps": 30.0,
                "audio_inject_scale": 1.0,
            },
            other={
                "audio_embed": _randn(1, 1, 4 * T + 1, 35),
                "clip_vision_output": _clip(1),
                "clip_vision_output_ref": _clip(2),
                "fps": 15.0,
                "audio_inject_scale": 1.0,
            },
            other_is="another fps (a constant: the global patch embedding, head and time positions)",
        ),
    }


CASES = _make_cases()


def _available_bytes():
    with open("/proc/meminfo") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:"))


@pytest.fixture(scope="module")
def variant_model():
    """``variant_model(family)``: the family's depth-1 model in bf16, one held at a time (0.6 to
    2.6B parameters: bf16 halves what float32 would hold on a shared CPU machine; the checks are
    bit-equality either way). Skipped, naming the sizes, where the machine has not the memory the
    load takes (the checkpoint and the model side by side)."""
    held = {}

    def get(family):
        if family not in held:
            held.clear()
            gc.collect()
            skip_unless_host_builds(family)
            need = (
                2
                * 2
                * sum(torch.Size(shape).numel() for shape in synthetic.state_dict_shapes(family, depth=1).values())
            )
            peak = need * 1.5 + 2**30  # what a load held at its peak on the CPU (RSS), with a GiB of headroom
            if sys.platform.startswith("linux") and _available_bytes() < peak:
                pytest.skip(
                    f"{family}'s depth-1 load peaks at about {peak / 2**30:.1f} GiB of RAM "
                    f"(checkpoint and model {need / 2**30:.1f} GiB); {_available_bytes() / 2**30:.1f} GiB available"
                )
            held[family] = synthetic.load_model(family, depth=1, seed=0, dtype=torch.bfloat16)
        return held[family]

    yield get
    held.clear()
    gc.collect()


def _with(conditioning, extras):
    return [[context, {**options, **extras}] for context, options in conditioning]


def test_a_variant_stays_off_until_its_gpu_test_passed(pack, variant_model, standin_graphs, monkeypatch):
    """A variant's adapter serves only once its H200 tests passed (``gpu_verified``); unverified,
    BCG Apply leaves it unchanged and names the opt-in (the same code path for each variant; VACE
    here, in whichever state its adapter says)."""
    check_gpu_verification_state(pack[1], variant_model("wan_vace"), "wan_vace", monkeypatch)


def _check_variant(family, model, bcg_model, session, width=64, height=64, frames=5):
    """The variant's inputs replay exactly, are read live, and its constant or optional input is
    another signature (the module docstring)."""
    case = _make_cases((frames - 1) // 4 + 1, height // 8, width // 8)[family]
    positive, _ = conds("wan")

    def both(extras, seed):
        cond = _with(positive, extras)
        latent = case.latent(seed) if case.latent else None
        args = (family, width, height, 2, 1.0, cond, cond)
        out = synthetic.sample(bcg_model, *args, seed=5, frames=frames, latent=latent)
        return out, synthetic.sample(model, *args, seed=5, frames=frames, latent=latent)

    out, eager = both(case.inputs(1), 1)
    assert torch.equal(out, eager), (out - eager).abs().max()
    run = session.last_run
    assert session.runner.stats.captures == 1 and run["replayed"] == 1, run

    out2, eager2 = both(case.inputs(2), 2)
    assert torch.equal(out2, eager2), (out2 - eager2).abs().max()
    assert not torch.equal(eager, eager2), (
        "the variant's inputs do not change the output: this test would not see a frozen input"
    )
    assert session.runner.stats.captures == 1 and session.last_run["replayed"] == 2, session.last_run

    if case.other is not None:
        out3, eager3 = both(case.other, 1)
        assert torch.equal(out3, eager3), (case.other_is, (out3 - eager3).abs().max())
        assert session.runner.stats.captures == 2, (case.other_is, session.last_run)
        assert session.last_run["replayed"] == 1 and not torch.equal(eager3, eager), (case.other_is, session.last_run)


@pytest.mark.parametrize("family", list(CASES))
def test_the_variants_conditioning_replays_exactly_and_is_read_live(pack, variant_model, standin_graphs, family):
    model = variant_model(family)
    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    _check_variant(family, model, bcg_model, session_of(bcg_model))


GPU_FAMILIES = [f for f in (os.environ.get("BCG_GPU_FAMILIES", "").split() or CASES) if f in CASES]


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"
)
@pytest.mark.parametrize("family", GPU_FAMILIES)
def test_the_variants_inputs_are_bit_exact_on_cuda(family):
    """The real width at the recipe's ``gpu_test_depth``, 832x480 at 17 frames (5 latent frames,
    7,800 tokens), the same checks as the CPU test, through bcg_runtime.comfy.api (the GPU image
    has no PyAV for the node shells). ``BCG_GPU_FAMILIES`` picks variants."""
    from bcg_runtime.comfy import api
    from bcg_runtime.comfy.hooks import session_of as api_session_of

    skip_unless_host_builds(family)
    model = synthetic.load_model(family, depth=synthetic.family_info(family).gpu_test_depth, seed=0, device="cuda")
    try:
        bcg_model = api.apply(model, "auto")
        _check_variant(family, model, bcg_model, api_session_of(bcg_model), width=832, height=480, frames=17)
    finally:
        del model
        release_cuda_memory(unload=True)
