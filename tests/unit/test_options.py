"""transformer_options classification: bookkeeping is ignored, math-steering values are keyed,
Dynamic VRAM prefetch and anything unknown make the call eager with a reason."""

import pytest

from bcg_runtime.comfy.guards import DYNAMIC_VRAM_REFUSAL
from bcg_runtime.comfy.options import options_key

pytestmark = pytest.mark.unit
OWN = object()  # stands for BCG's own attention break


def test_a_comfyui_033_ksampler_call_is_keyable():
    """The entries a 0.33 KSampler run passes to the DiT (measured with the comfy layer) key cleanly."""
    options = {
        "wrappers": {},
        "callbacks": {},
        "sigmas": 1.0,
        "sample_sigmas": [1.0, 0.5, 0.0],
        "cond_or_uncond": [0, 1],
        "uuids": ["a", "b"],
        "multigpu_thread_device": "cuda:0",
        "prefetch_dynamic_vbars": False,
        "optimized_attention_override": OWN,
        "patches": {},
        "patches_replace": {},
    }
    assert options_key(options, OWN) == ((), None)


def test_dynamic_prefetch_refuses_with_the_fix():
    extra, refusal = options_key({"prefetch_dynamic_vbars": True}, None)
    assert refusal == DYNAMIC_VRAM_REFUSAL
    assert "--disable-dynamic-vram" in refusal and "BCG Apply" in refusal


def test_rope_options_enter_the_key_and_differ_by_value():
    a, _ = options_key({"rope_options": {"scale_x": 1.0}}, None)
    b, _ = options_key({"rope_options": {"scale_x": 2.0}}, None)
    assert a and b and a != b


@pytest.mark.parametrize(
    "options,reason",
    [
        ({"patches": {"attn1_patch": [print]}}, "model patches present (patches: attn1_patch)"),
        ({"patches": {"post_input": [print]}}, "model patches present (patches: post_input)"),
        ({"patches_replace": {"dit": {("double_block", 0): print}}}, "model patches present (patches_replace: dit)"),
        ({"optimized_attention_override": print}, "another attention override replaced BCG's"),
        ({"something_new": 1}, "unknown transformer_options entry 'something_new'"),
        ({"rope_options": {"f": print}}, "rope_options holds a builtin_function_or_method, which cannot be keyed"),
    ],
)
def test_math_changing_or_unknown_entries_run_eager_with_the_reason(options, reason):
    extra, refusal = options_key(options, OWN)
    assert refusal is not None and refusal.startswith(reason), refusal


def test_minimax_h3_flow_shifts_enter_the_key_each_by_value():
    """ModelSamplingMiniMaxH3's two shifts: the audio shift alone moves H3's math at an unchanged
    step, so each is keyed apart."""
    base = {"minimax_h3_sigma_shift_video": 12.0, "minimax_h3_sigma_shift_audio": 3.0}
    keys = [
        options_key(o, None)
        for o in (base, {**base, "minimax_h3_sigma_shift_audio": 2.0}, {**base, "minimax_h3_sigma_shift_video": 6.0})
    ]
    assert all(refusal is None and extra for extra, refusal in keys), keys
    assert len({extra for extra, _ in keys}) == 3, keys
