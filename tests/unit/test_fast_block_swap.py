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
        return self.proj(torch.relu(x)) * 2


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


def test_compiled_blocks_are_in_place_only_in_the_capture_forward_and_always_restored():
    dit = DiT()
    originals = list(dit.blocks)
    fast = RegionalCompile(dit)
    seen = []

    def executor(fail=False):
        seen.append([type(b).__name__ for b in dit.blocks])
        if fail:
            raise RuntimeError("interrupted")
        return "done"

    run = fast.strategy().capture_forward(executor)  # what a capture runs
    assert executor() == "done" and seen[-1] == ["Block"] * 3  # every other call: the model as loaded
    assert run() == "done" and seen[-1] == ["OptimizedModule"] * 3
    assert list(dit.blocks) == originals
    with pytest.raises(RuntimeError, match="interrupted"):
        run(fail=True)
    assert list(dit.blocks) == originals  # an error mid-forward leaves the shared model as it was


def test_quantised_layers_run_opaque_to_dynamo_only_under_capture():
    """A comfy_quant layer (ComfyUI marks it with ``layout_type``) is a graph break in the compiled
    block while fast mode captures; before and after, each layer's forward is what it was (the
    plain class method, or a forward someone set on the instance)."""
    dit = DiT()
    for block in dit.blocks:
        block.proj.layout_type = "TensorCoreFP8Layout"
    plain, patched = dit.blocks[0].proj, dit.blocks[1].proj
    own_forward = patched.forward = lambda x: x
    fast = RegionalCompile(dit)
    x = torch.randn(2, 4)
    breaks = []

    def executor():  # the blocks in place are compiled wrappers; explain traces the original
        explained = torch._dynamo.explain(dit.blocks[0]._orig_mod)(x)
        breaks.extend("torch.compiler.disable" in r.reason for r in explained.break_reasons)

    run = fast.compiled(executor)
    run()
    assert breaks == [True]
    assert "forward" not in plain.__dict__ and patched.forward is own_forward
    assert torch._dynamo.explain(Block.forward.__get__(dit.blocks[0]))(x).graph_break_count == 0

    def interrupted():
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        fast.compiled(interrupted)()
    assert "forward" not in plain.__dict__ and patched.forward is own_forward


def test_a_fast_graph_serves_only_within_a_rounding_difference_of_the_plain_forward():
    fast = RegionalCompile(DiT())
    plain = {"x": torch.tensor([1.0, -2.0, 2.0]), "steps": 3}
    rounded = {"x": torch.tensor([1.0, -2.0, 2.01]), "steps": 3}
    assert fast.accept(rounded, plain) is None
    assert fast.last_difference.max_abs == pytest.approx(0.01, abs=1e-6)
    assert fast.last_difference.relative == pytest.approx(0.01 / 3, rel=1e-4)

    broken = {"x": torch.tensor([1.0, float("nan"), 2.0]), "steps": 3}
    assert fast.accept(broken, plain) == "fast: the compiled forward gave NaN or Inf where the plain forward did not"
    nan_in_both = {"x": torch.tensor([1.0, float("nan"), 2.0]), "steps": 3}
    assert fast.accept(broken, nan_in_both) is None  # the model's own NaN is not the compile's doing

    other = {"x": torch.tensor([-1.0, 2.0, -2.0]), "steps": 3}  # twice the output's norm away
    assert fast.accept(other, plain) == (
        "fast: the compiled forward differs from the plain one by 200% of its norm (over 25%: not a rounding difference)"
    )
