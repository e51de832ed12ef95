"""Mode fast's block swapping (bcg_runtime.comfy.fast): torch only, nothing compiled here (a
``torch.compile`` wrapper compiles on its first call, and these tests never call one under
capture). Compilation and capture run in tests/comfy/test_fast_mode.py and on the H200."""

import pytest
import torch

from bcg_runtime.comfy.fast import RegionalCompile, repeated_block_lists

pytestmark = pytest.mark.unit


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x)


class DiT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block() for _ in range(3))
        self.mixed = torch.nn.ModuleList([Block(), torch.nn.Linear(4, 4)])  # not one class: left alone
        self.head = torch.nn.Linear(4, 4)


def test_only_lists_of_one_block_class_are_compiled():
    dit = DiT()
    assert [name for name, _ in repeated_block_lists(dit)] == ["blocks"]
    with pytest.raises(ValueError, match="mode: 'fast' compiles the DiT's repeated blocks.*use 'auto'"):
        RegionalCompile(torch.nn.Sequential(torch.nn.Linear(4, 4)))


def test_compiled_blocks_are_in_place_only_under_capture_and_always_restored():
    dit = DiT()
    originals = list(dit.blocks)
    fast = RegionalCompile(dit)
    seen = []

    def executor(fail=False):
        seen.append([type(b).__name__ for b in dit.blocks])
        if fail:
            raise RuntimeError("interrupted")
        return "done"

    capturing = False
    run = fast.forward(executor, lambda: capturing)
    assert run() == "done" and seen[-1] == ["Block"] * 3  # outside a capture: the model as loaded
    capturing = True
    assert run() == "done" and seen[-1] == ["OptimizedModule"] * 3
    assert list(dit.blocks) == originals
    with pytest.raises(RuntimeError, match="interrupted"):
        run(fail=True)
    assert list(dit.blocks) == originals  # an error mid-forward leaves the shared model as it was
