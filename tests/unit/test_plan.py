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


@pytest.mark.parametrize("text,message", [("0", "batch_sizes: 0 is out of range"), ("x", "batch_sizes: 'x' is not a whole number")])
def test_bad_batch_sizes(text, message):
    with pytest.raises(PlanError, match=message):
        parse_batch_sizes(text)


def test_plan_shapes_largest_first():
    plan = parse_plan("512x512, 1024x1024", "64,256", "1,2", 1024)
    shapes = plan.shapes()
    assert shapes[0][:2] == (1024, 1024) and shapes[0][3] == 2
    assert shapes[-1][:2] == (512, 512) and shapes[-1][3] == 1
    assert len(shapes) == 8
    assert parse_plan("512x512", None, "1", 1024).text_lengths == []
