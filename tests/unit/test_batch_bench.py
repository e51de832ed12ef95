"""The batch benchmark's prompt-length draw: seeded, within bounds, and spread like real prompts."""

import statistics

import pytest

from bench.batch import prompt_lengths

pytestmark = pytest.mark.unit


def test_prompt_lengths_are_seeded_bounded_and_spread():
    lengths = prompt_lengths(100, seed=0)
    assert lengths == prompt_lengths(100, seed=0) and lengths != prompt_lengths(100, seed=1)
    assert len(lengths) == 100 and min(lengths) >= 10 and max(lengths) <= 200
    # a realistic spread: many distinct lengths, short and long prompts both present
    assert len(set(lengths)) >= 50
    assert min(lengths) < 30 and max(lengths) > 120
    assert 40 <= statistics.median(lengths) <= 90
