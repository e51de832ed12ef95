"""Warm-up plan parsing: every bad value gets an error naming the field, the value and the fix."""

import pytest

from bcg_runtime.plan import PlanError, parse_batch_sizes, parse_plan, parse_resolutions, parse_text_buckets

pytestmark = pytest.mark.unit


def test_resolutions_accept_commas_newlines_and_spacing():
    assert parse_resolutions("512x512, 1024X768\n 640 x 640;") == [(512, 512), (1024, 768), (640, 640)]


@pytest.mark.parametrize(
    "text,message",
    [
        ("512x", "resolutions: '512x' is not WIDTHxHEIGHT (e.g. 1024x1024)"),
        ("0x512", "resolutions: '0x512' has width 0; sizes must be positive"),
        ("-8x512", "resolutions: '-8x512' has width -8; sizes must be positive"),
        ("512x512x3", "resolutions: '512x512x3' is not WIDTHxHEIGHT"),
        ("abc", "resolutions: 'abc' is not WIDTHxHEIGHT"),
        ("", "resolutions: empty"),
        (" , \n", "resolutions: empty"),
        ("99999x512", "above ComfyUI's maximum 16384"),
        ("1001x1000", "width 1001, not a multiple of 8 (the latent grid); use 1000 or 1008"),
        ("4x512", "width 4, not a multiple of 8 (the latent grid); use 8"),
    ],
)
def test_bad_resolutions_name_field_value_and_fix(text, message):
    with pytest.raises(PlanError) as e:
        parse_resolutions(text)
    assert message in str(e.value)


def test_obvious_intent_is_normalised_with_a_note():
    notes = []
    assert parse_resolutions("512, 512x512, 768x768", notes) == [(512, 512), (768, 768)]
    assert notes == ["resolutions: '512' read as 512x512", "resolutions: duplicate 512x512 dropped"]
    notes = []
    assert parse_text_buckets("64,64,128", 1024, notes) == [64, 128]
    assert notes == ["text_buckets: duplicate 64 dropped"]


@pytest.mark.parametrize(
    "text,message",
    [
        ("0", "text_buckets: 0 is out of range; accepted: 1 to 512"),
        ("-5", "text_buckets: -5 is out of range"),
        ("abc", "text_buckets: 'abc' is not a whole number"),
        ("1024", "text_buckets: 1024 is out of range; accepted: 1 to 512"),
        ("", "text_buckets: empty"),
    ],
)
def test_bad_text_buckets(text, message):
    with pytest.raises(PlanError) as e:
        parse_text_buckets(text, 512)
    assert message in str(e.value)


@pytest.mark.parametrize(
    "text,message", [("0", "batch_sizes: 0 is out of range"), ("x", "batch_sizes: 'x' is not a whole number")]
)
def test_bad_batch_sizes(text, message):
    with pytest.raises(PlanError, match=message):
        parse_batch_sizes(text)


def test_a_plan_without_text_buckets_plans_no_placeholder_prompts():
    assert parse_plan("512x512", None, "1", 1024).text_lengths == []


def test_the_plan_holds_frame_counts_to_the_model_it_is_for():
    assert parse_plan("832x480x33", "64", "1", 1024, model="Wan", temporal_scale=4).resolutions == [(832, 480, 33)]
    with pytest.raises(PlanError, match="Wan takes 4k\\+1 frames"):
        parse_plan("832x480x34", "64", "1", 1024, model="Wan", temporal_scale=4)
    with pytest.raises(PlanError, match="FLUX.1 makes images"):
        parse_plan("512x512x5", "64", "1", 1024, model="FLUX.1")


# ---------------------------------------------------------------- video: WIDTHxHEIGHTxFRAMES
def test_sizes_take_an_optional_frame_count():
    from bcg_runtime.plan import parse_sizes

    notes = []
    assert parse_sizes("832x480x33, 832X480 x 17\n512x512; 832x480x33", notes) == [
        (832, 480, 33),
        (832, 480, 17),
        (512, 512, None),
    ]
    assert notes == ["resolutions: duplicate 832x480x33 dropped"]
    assert parse_sizes("512", []) == [(512, 512, None)]
    plan = parse_plan("832x480x33, 512x512", "64", "1,2", 1024)
    assert plan.resolutions == [(832, 480, 33), (512, 512, None)]


@pytest.mark.parametrize(
    "text,message",
    [
        ("832x480x0", "resolutions: '832x480x0' has 0 frames; frame counts must be 1 to 16384, e.g. 832x480x33"),
        ("832x480x-3", "resolutions: '832x480x-3' has -3 frames"),
        (
            "832x480x",
            "resolutions: '832x480x' is not WIDTHxHEIGHT (e.g. 1024x1024) or WIDTHxHEIGHTxFRAMES (e.g. 832x480x33)",
        ),
        ("832x480x33x2", "is not WIDTHxHEIGHT"),
        ("830x480x33", "width 830, not a multiple of 8 (the latent grid); use 824 or 832"),
        (
            "",
            "resolutions: empty; give at least one WIDTHxHEIGHT, e.g. 1024x1024 (video: WIDTHxHEIGHTxFRAMES, e.g. 832x480x33)",
        ),
    ],
)
def test_bad_sizes_name_field_value_and_fix(text, message):
    from bcg_runtime.plan import parse_sizes

    with pytest.raises(PlanError) as e:
        parse_sizes(text)
    assert message in str(e.value)


def test_image_only_resolutions_say_where_frames_belong():
    with pytest.raises(
        PlanError,
        match="resolutions: '832x480x33' is not WIDTHxHEIGHT .*frame counts are for the warm-up of video models",
    ):
        parse_resolutions("512x512, 832x480x33")


def test_frame_counts_are_held_to_the_models_temporal_grid():
    from bcg_runtime.plan import check_frames

    check_frames([(832, 480, 33), (832, 480, 1), (512, 512, None)], 4, "Wan")
    check_frames([(512, 512, None)], None, "FLUX.1")
    with pytest.raises(
        PlanError, match=r"resolutions: '832x480x34' has 34 frames; Wan takes 4k\+1 frames .*; use 33 or 37"
    ):
        check_frames([(832, 480, 34)], 4, "Wan")
    with pytest.raises(
        PlanError, match="resolutions: '512x512x5' gives a frame count, but FLUX.1 makes images; write 512x512"
    ):
        check_frames([(512, 512, 5)], None, "FLUX.1")
