"""Mode fast's accept rule (issue 26, 5): a proven fast graph serves only when its output is a
rounding difference away from the plain forward's; an all-zero or a scaled output never serves."""

import pytest
import torch

from bcg_runtime.comfy.fast import MAX_RELATIVE_DIFFERENCE, RegionalCompile

pytestmark = pytest.mark.unit


class _TwoBlocks(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(2)])


@pytest.fixture(scope="module")
def check():
    return RegionalCompile(_TwoBlocks()).accept


PLAIN = torch.linspace(-2, 3, 64).reshape(4, 16)


@pytest.mark.parametrize(
    "captured, refused",
    [
        (PLAIN.clone(), False),
        (PLAIN * (1 + 0.02), False),  # a bf16-size rounding difference (about 2% of the norm)
        (PLAIN * (1 - 0.08), False),  # an fp8-size one (about 8%)
        (torch.zeros_like(PLAIN), True),  # all-zero: relative difference exactly 1.0
        (PLAIN * 0.1, True),  # 0.1x eager: 0.9
        (-PLAIN, True),
        (torch.where(PLAIN > 0, torch.full_like(PLAIN, float("nan")), PLAIN), True),  # new NaN
    ],
)
def test_accept_refuses_what_no_rounding_gives(check, captured, refused):
    reason = check(captured, PLAIN)
    assert (reason is not None) == refused, (reason, MAX_RELATIVE_DIFFERENCE)
