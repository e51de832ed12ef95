"""transformer_options classification: bookkeeping is ignored, math-steering values are keyed,
Dynamic VRAM prefetch and anything unknown make the call eager with a reason; and the watch that
checks, at each capture, that the forward does not read the bookkeeping it ignores."""

import copy

import pytest

from bcg_runtime.comfy.guards import DYNAMIC_VRAM_REFUSAL
from bcg_runtime.comfy.options import WatchedOptions, options_key, watched_call
from bcg_runtime.core.capture import UnkeyedOpaqueRead

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
        ({"optimized_attention_override": print}, "another BCG model's attention break is installed here"),
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


def test_a_watched_bookkeeping_entry_the_call_came_with_raises_on_every_kind_of_read():
    """The capture's plain run gets its options watched: a read of a bookkeeping entry present at
    the call fails the capture naming the entry, however the forward spells the read."""
    call = {"cond_or_uncond": [1, 0], "sigmas": 0.5, "patches": {}, "rope_options": {"scale_x": 1.0}}
    reads = {
        "[]": lambda o: o["cond_or_uncond"],
        "get": lambda o: o.get("cond_or_uncond"),
        "in": lambda o: "cond_or_uncond" in o,
        "pop": lambda o: o.pop("cond_or_uncond"),
        "setdefault": lambda o: o.setdefault("cond_or_uncond", [0]),
        "copy()[]": lambda o: o.copy()["cond_or_uncond"],
    }
    for spelling, read in reads.items():
        with pytest.raises(UnkeyedOpaqueRead, match=r"reads transformer_options\['cond_or_uncond'\]"):
            read(WatchedOptions(call))
        assert call["cond_or_uncond"] == [1, 0], spelling  # the call's own options are untouched
    watched = WatchedOptions(call)
    # What the key holds or classifies, and what the call did not bring, is read freely.
    assert watched["patches"] == {} and watched.get("rope_options") == {"scale_x": 1.0}
    assert watched.get("block_index") is None and "img_slice" not in watched


def test_an_entry_the_forward_writes_is_its_own_and_a_copy_keeps_the_watch():
    """ComfyUI's forwards copy their options and write block entries into the copy
    (``block_index``, ``img_slice``): those reads are of the forward's own values. A copy is
    watched as its original was; what one copy writes does not unwatch the other."""
    watched = WatchedOptions({"block_index": 7, "sigmas": 0.5, "sample_sigmas": [1.0, 0.5]})
    watched["block_index"] = 0
    assert watched["block_index"] == 0
    copied = watched.copy()
    copied["sigmas"] = 0.25
    assert copied["sigmas"] == 0.25
    with pytest.raises(UnkeyedOpaqueRead, match="'sigmas'"):
        watched["sigmas"]
    with pytest.raises(UnkeyedOpaqueRead, match="'sample_sigmas'"):
        copy.deepcopy(copied)["sample_sigmas"]
    watched.update(sample_sigmas=[0.5])
    assert watched["sample_sigmas"] == [0.5]
    merged = WatchedOptions({"sigmas": 0.5, "uuids": ["a"]})
    merged |= {"sigmas": 0.25}
    assert merged["sigmas"] == 0.25
    with pytest.raises(UnkeyedOpaqueRead, match="'uuids'"):
        merged["uuids"]


def test_iterating_the_options_is_not_a_read():
    """BCG's own attention break tells the written entries apart by iterating the options under
    capture; iteration and plain copies are not watched (options.WatchedOptions says what that
    leaves to the proof)."""
    watched = WatchedOptions({"cond_or_uncond": [0], "uuids": ["a"]})
    assert dict(watched.items()) == {"cond_or_uncond": [0], "uuids": ["a"]} == {**watched}


def test_watched_call_gives_each_run_a_fresh_watch_over_the_calls_options():
    own = {"cond_or_uncond": [0]}
    kwargs = {"x": 1, "transformer_options": own}
    first, second = watched_call(kwargs), watched_call(kwargs)
    assert isinstance(first["transformer_options"], WatchedOptions) and first["x"] == 1
    first["transformer_options"]["cond_or_uncond"] = [1]  # one run's write is not the next run's
    with pytest.raises(UnkeyedOpaqueRead):
        second["transformer_options"]["cond_or_uncond"]
    assert kwargs["transformer_options"] is own and own == {"cond_or_uncond": [0]}
    assert watched_call({"x": 1}) == {"x": 1}
