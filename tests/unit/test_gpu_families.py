"""The GPU suite's family selection: ``BCG_GPU_FAMILIES`` picks families, ``BCG_GPU_FAMILY_PART``
gives one lane its share, and the lanes' shares are the whole list once each."""

import pathlib
import sys

import pytest

from bench import synthetic

COMFY_TESTS = str(pathlib.Path(__file__).resolve().parents[1] / "comfy")
if COMFY_TESTS not in sys.path:  # the comfy layer's helpers, the module its tests import
    sys.path.insert(0, COMFY_TESTS)
from bcg_testing import gpu_families  # noqa: E402

pytestmark = pytest.mark.unit


def test_lanes_share_every_family_once():
    every = list(synthetic.FAMILIES)
    assert gpu_families({}) == every
    parts = [gpu_families({"BCG_GPU_FAMILY_PART": f"{k}/3"}) for k in (1, 2, 3)]
    assert sorted(f for part in parts for f in part) == sorted(every)
    assert all(abs(len(part) - len(every) / 3) < 1 for part in parts)
    picked = {"BCG_GPU_FAMILIES": "flux sd3 wan zimage"}
    assert gpu_families({**picked, "BCG_GPU_FAMILY_PART": "2/2"}) == ["sd3", "zimage"]


@pytest.mark.parametrize("part", ["0/2", "3/2", "2", "a/b", "1/"])
def test_a_part_that_is_not_k_of_n_names_the_variable(part):
    with pytest.raises(ValueError, match=f"BCG_GPU_FAMILY_PART='{part}'"):
        gpu_families({"BCG_GPU_FAMILY_PART": part})
