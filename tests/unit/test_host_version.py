"""The tested-ComfyUI range and the one log line on a newer host (``bcg_runtime/comfy/host_version.py``).

No ComfyUI needed: versions are passed in, and the running-host path is driven with a stand-in
``comfyui_version`` module."""

import logging
import sys
import types

import pytest

from bcg_runtime.comfy import host_version
from bcg_runtime.comfy.host_version import (
    TESTED_COMFYUI,
    is_newer_than_tested,
    newest_tested,
    parse_version,
    report_host,
)

pytestmark = pytest.mark.unit
LOGGER = host_version.LOGGER_NAME
EXPECTED = (
    "[BCG] ComfyUI 0.38.1 is newer than the newest version this pack was tested on (0.33.0): "
    "every capture is still proven bit-equal before it serves; see docs/compatibility.md"
)


def test_tested_versions_are_data():
    assert TESTED_COMFYUI == ("0.8.0", "0.33.0")
    assert newest_tested() == "0.33.0"  # numeric order, not string order ("0.8.0" > "0.33.0" as text)


@pytest.mark.parametrize(
    "text,parsed",
    [
        ("0.38.1", (0, 38, 1)),
        ("0.8.0", (0, 8, 0)),
        ("v0.34.0", (0, 34, 0)),
        ("0.38.1+cu130", (0, 38, 1)),
        ("0.35.0rc1", (0, 35, 0)),
        (" 0.36 ", (0, 36)),
        ("", None),
        ("unknown", None),
        (None, None),
        (38, None),
    ],
)
def test_parse_version(text, parsed):
    assert parse_version(text) == parsed


@pytest.mark.parametrize(
    "version,newer",
    [
        ("0.8.0", False),
        ("0.33.0", False),
        ("0.33", False),  # equal once padded
        ("0.12.0", False),  # between the tested versions
        ("0.3.64", False),  # older than the oldest: not this function's business
        ("0.33.1", True),  # the 0.33 backport release was not tested
        ("0.34.0", True),
        ("0.38.1", True),
        ("1.0.0", True),
        ("garbage", None),
        (None, None),
    ],
)
def test_is_newer_than_tested(version, newer):
    assert is_newer_than_tested(version) is newer


def test_one_info_line_on_a_newer_host(caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    assert report_host("0.38.1") == EXPECTED
    records = [r for r in caplog.records if r.name == LOGGER]
    assert [(r.levelno, r.getMessage()) for r in records] == [(logging.INFO, EXPECTED)]


@pytest.mark.parametrize("version", ["0.8.0", "0.33.0", "0.20.0"])
def test_nothing_on_a_tested_host(caplog, version):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    assert report_host(version) is None
    assert [r for r in caplog.records if r.name == LOGGER] == []


@pytest.mark.parametrize("version", [None, "", "unknown"])
def test_unreadable_version_is_debug_only(caplog, version):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    assert report_host(version) is None
    assert all(r.levelno == logging.DEBUG for r in caplog.records if r.name == LOGGER)


def test_running_host_is_read_from_comfyui_version_and_reported_once(caplog, monkeypatch):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    monkeypatch.setitem(sys.modules, "comfyui_version", types.SimpleNamespace(__version__="0.38.1"))
    monkeypatch.setattr(host_version, "_reported", False)
    assert host_version.running_comfyui_version() == "0.38.1"
    assert host_version.report_running_host() == EXPECTED
    assert host_version.report_running_host() is None  # a second load-path call logs nothing
    assert [r.getMessage() for r in caplog.records if r.name == LOGGER] == [EXPECTED]


def test_running_host_without_comfyui_version(caplog, monkeypatch):
    caplog.set_level(logging.INFO, logger=LOGGER)
    monkeypatch.setitem(sys.modules, "comfyui_version", None)  # import raises ImportError
    monkeypatch.setattr(host_version, "_reported", False)
    assert host_version.running_comfyui_version() is None
    assert host_version.report_running_host() is None
    assert [r for r in caplog.records if r.name == LOGGER] == []
