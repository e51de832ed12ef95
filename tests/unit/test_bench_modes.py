"""The benchmark's mode grammar: a base mode, optionally after an attention backend (``sage+bcg``),
and which mode a stacked BCG row must equal bit for bit."""

import re

import pytest

from bcg_runtime.bench import split_mode, without_bcg

pytestmark = pytest.mark.unit


def test_modes_split_into_the_stacked_tools_and_the_base():
    assert split_mode("bcg") == ((), "bcg")
    assert split_mode("compile-inductor") == ((), "compile-inductor")
    assert split_mode("sage") == (("sage",), "eager")
    assert split_mode("sage+bcg-full") == (("sage",), "bcg-full")
    assert split_mode("flash+fast") == (("flash",), "fast")
    assert split_mode("easycache+bcg-full") == (("easycache",), "bcg-full")
    assert split_mode("sage+easycache") == (("sage", "easycache"), "eager")
    assert split_mode("lazycache+sage+bcg") == (("lazycache", "sage"), "bcg")


@pytest.mark.parametrize("mode", ["sage+turbo", "xformers+bcg", "bcg+sage", "sage+flash+bcg", "easycache+lazycache", ""])
def test_an_unknown_mode_names_the_field_and_what_is_accepted(mode):
    with pytest.raises(SystemExit, match=f"--modes: unknown mode '{re.escape(mode)}'; accepted: eager, .*one attention backend and one step cache \\(sage, flash, easycache, lazycache\\)"):
        split_mode(mode)


def test_exact_bcg_modes_are_compared_with_the_same_stack_without_bcg():
    assert without_bcg("bcg") == "eager"
    assert without_bcg("bcg-full") == "eager"
    assert without_bcg("sage+bcg-full") == "sage"
    assert without_bcg("sage+easycache+bcg-full") == "sage+easycache"
    assert without_bcg("fast") is None  # not bit-exact by design
    assert without_bcg("sage+fast") is None
    assert without_bcg("compile-inductor") is None
    assert without_bcg("sage") is None
