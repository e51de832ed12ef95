"""Mode fast: the DiT's repeated blocks compiled once (regional compilation), captured as one graph.

Exact replay removes launch overhead and nothing else; at sizes where eager already keeps the GPU
busy it cannot help. Mode fast also changes the kernels: every ``nn.ModuleList`` of the DiT whose
members share one class (FLUX's ``double_blocks`` and ``single_blocks``, Z-Image's ``layers``,
Qwen-Image's ``transformer_blocks``, ...) runs through ``torch.compile`` (inductor). Dynamo keys
its cache on the block's code, and with parameters passed as inputs (``inline_inbuilt_nn_modules``,
torch's default) one compiled graph serves every block of a list, so compile time does not grow
with depth; ``dynamic=True`` lets one graph serve every warmed shape (torch still specialises sizes
0 and 1, e.g. batch 1 apart from batch 2). The whole forward, compiled blocks and the glue between
them, is then captured as one CUDA graph: fused kernels with no launch overhead.

Contract, and what differs from the exact modes:

* Compiled code runs only inside a capture (the runner's warm-up runs, the capture, the proof),
  through the mode's :class:`~bcg_runtime.core.runner.CaptureStrategy`.
  Every call that does not replay runs the plain eager forward, so a new shape is a new capture
  (policy 'on first call') or eager with the reason, never a silent recompile in the middle of a
  sampling run.
* The proof still holds a graph to bit-equality, against the compiled forward it captured. Against
  stock eager the output differs (fused kernels round differently): the warm-up report and the
  badge say ``fast (not bit-exact)`` with the max abs difference from eager measured per shape at
  warm-up.
* A proven graph serves only if its output is a rounding difference away from the plain forward's
  (:meth:`RegionalCompile.accept`, the runner's ``accept``): NaN or Inf where the plain forward has
  none, or a difference of over a quarter of the output's norm, is a miscompiled or broken kernel,
  and that shape runs eager with the reason. Measured fused-kernel differences are well below it.
* The compiled blocks are swapped into the DiT's lists only for the duration of a compiled call
  and swapped back after (also on error): the model module is shared with every other node of the
  workflow, which must keep running the model as loaded.
* transformer_options entries are left out of dynamo's guards, as core's TorchCompileModel does
  (``block_index`` changes per block and would recompile each one).
* On Hopper and newer GPUs SDPA tries cuDNN's attention first while fast mode captures
  (``sdpa_order``): about half of flash's time on the H200. Calls that do not replay keep
  ComfyUI's order.
* Quantised layers (a comfy_quant checkpoint's Linear layers, whose weights are comfy-kitchen
  ``QuantizedTensor`` subclasses) run opaque to dynamo, eagerly between the compiled pieces of a
  block: dynamo cannot guard on a QuantizedTensor activation (torch 2.11 deep-copies its
  metadata, reaching a fake tensor's data pointer), and their fp8 matmul is one cuBLAS kernel
  inductor has nothing to fuse into. They are graph-safe, so the capture still holds the forward
  whole.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch
from torch.utils._pytree import tree_leaves

from ..core.capture import CaptureStrategy
from ..errors import InputError

log = logging.getLogger(__name__)

#: What the report and the badge say about a fast-mode graph.
NOT_BIT_EXACT = "fast (not bit-exact)"
#: A fast graph whose output differs from the plain forward's by more than this fraction of the
#: plain output's norm (L2) is refused. Fused kernels differ from eager by rounding, a few percent
#: on bf16 and under a tenth on fp8 weights (docs/how-it-works.md has the measured figures); an
#: all-zero output (1.0) or a scaled one (0.1x: 0.9) is a broken kernel, never rounding.
MAX_RELATIVE_DIFFERENCE = 0.25
#: dynamo's recompile limit while compiling blocks: each list compiles a few graphs (static first
#: shape, then dynamic; 0/1 specialisations), and the default 8 would silently fall back to eager.
RECOMPILE_LIMIT = 64


def skip_transformer_options(guard_entries) -> list[bool]:
    return ["transformer_options" not in entry.name for entry in guard_entries]


@dataclass(frozen=True)
class Difference:
    """How far a fast graph's output is from the plain forward's (every tensor of the output)."""

    max_abs: float
    #: ``||captured - plain|| / ||plain||`` over all elements (L2).
    relative: float
    #: NaN or Inf in the captured output where the plain output is finite.
    new_nonfinite: bool

    @classmethod
    def of(cls, captured: Any, plain: Any) -> "Difference":
        pairs = [
            (a.double(), b.double())
            for a, b in zip(tree_leaves(captured), tree_leaves(plain))
            if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.is_floating_point()
        ]
        new_nonfinite = any(bool((~a.isfinite() & b.isfinite()).any()) for a, b in pairs)
        finite = [(a.nan_to_num(), b.nan_to_num()) for a, b in pairs]
        max_abs = max(((a - b).abs().max().item() for a, b in finite if a.numel()), default=0.0)
        error = sum(((a - b) ** 2).sum().item() for a, b in finite) ** 0.5
        norm = sum((b**2).sum().item() for _, b in finite) ** 0.5
        return cls(max_abs, error / norm if norm else (0.0 if error == 0 else float("inf")), new_nonfinite)


def is_quantized_layer(module: torch.nn.Module) -> bool:
    """ComfyUI's mixed-precision ops mark a layer loaded from a comfy_quant checkpoint by its
    ``layout_type`` (``comfy/ops.py``); plain layers have none."""
    return getattr(module, "layout_type", None) is not None


@contextlib.contextmanager
def opaque_to_dynamo(modules: list[torch.nn.Module]) -> Iterator[None]:
    """Each module's forward wrapped in ``torch.compiler.disable`` for the duration (an instance
    attribute, put back as it was after: the class, and every other user of the model, are
    untouched)."""
    own = [module.__dict__.get("forward") for module in modules]  # a forward someone set on the instance
    for module in modules:
        module.forward = torch.compiler.disable(module.forward)
    try:
        yield
    finally:
        for module, forward in zip(modules, own):
            if forward is None:
                del module.forward
            else:
                module.forward = forward


def repeated_block_lists(diffusion_model: torch.nn.Module) -> list[tuple[str, torch.nn.ModuleList]]:
    """The DiT's direct ``ModuleList`` children whose members share one class (a reduced test
    model's list of one block counts: it is the same compiled graph)."""
    return [
        (name, child)
        for name, child in diffusion_model.named_children()
        if isinstance(child, torch.nn.ModuleList) and len(child) and len({type(m) for m in child}) == 1
    ]


class RegionalCompile:
    """The compiled twins of one DiT's repeated blocks, and the forward that runs through them."""

    def __init__(self, diffusion_model: torch.nn.Module, cudnn_attention: bool = False):
        self.cudnn_attention = cudnn_attention
        #: The difference :meth:`accept` measured last (the latest capture's).
        self.last_difference: Difference | None = None
        self.lists = repeated_block_lists(diffusion_model)
        if not self.lists:
            raise InputError(
                f"mode: 'fast' compiles the DiT's repeated blocks, and {type(diffusion_model).__name__} has no "
                "list of blocks; use 'auto'"
            )
        self._opaque = [
            m for _, blocks in self.lists for block in blocks for m in block.modules() if is_quantized_layer(m)
        ]
        options = {"guard_filter_fn": skip_transformer_options}
        self._compiled = [
            [torch.compile(block, dynamic=True, options=options) for block in blocks] for _, blocks in self.lists
        ]
        log.info(
            "[BCG] fast: compiling %s on first use (one compiled graph per list and shape family)%s",
            ", ".join(f"{name} ({len(blocks)})" for name, blocks in self.lists),
            f"; {len(self._opaque)} quantised layers run eagerly between the compiled pieces" if self._opaque else "",
        )
        if cudnn_attention:
            log.info("[BCG] fast: SDPA tries cuDNN's attention first while capturing")

    @contextlib.contextmanager
    def swapped_in(self) -> Iterator[None]:
        """The compiled blocks in the DiT's lists for the duration, the originals back after."""
        originals = [list(blocks) for _, blocks in self.lists]
        try:
            for (_, blocks), compiled in zip(self.lists, self._compiled):
                for i, block in enumerate(compiled):
                    blocks[i] = block
            with opaque_to_dynamo(self._opaque):
                yield
        finally:
            for (_, blocks), kept in zip(self.lists, originals):
                for i, block in enumerate(kept):
                    blocks[i] = block

    def accept(self, captured: Any, plain: Any) -> str | None:
        """The runner's ``accept``: None for a graph that may serve, else why not. Keeps the
        difference in :attr:`last_difference` for the warm-up report."""
        self.last_difference = difference = Difference.of(captured, plain)
        if difference.new_nonfinite:
            return "fast: the compiled forward gave NaN or Inf where the plain forward did not"
        if difference.relative > MAX_RELATIVE_DIFFERENCE:
            return (
                f"fast: the compiled forward differs from the plain one by {difference.relative:.0%} of its norm "
                f"(over {MAX_RELATIVE_DIFFERENCE:.0%}: not a rounding difference)"
            )
        return None

    def _attention_order(self) -> contextlib.AbstractContextManager:
        if not self.cudnn_attention:
            return contextlib.nullcontext()
        from .sdpa_order import cudnn_first  # reads ComfyUI's list: only where there is a GPU to capture on

        return cudnn_first()

    def compiled(self, executor: Callable) -> Callable:
        """``executor`` through the compiled blocks (what a capture runs; everything else runs the
        plain forward)."""

        def run(*args: Any, **kwargs: Any) -> Any:
            with (
                self.swapped_in(),
                self._attention_order(),
                torch._dynamo.config.patch(recompile_limit=RECOMPILE_LIMIT),
            ):
                return executor(*args, **kwargs)

        return run

    def strategy(self) -> CaptureStrategy:
        """Mode fast for the runner: capture the compiled forward, accept by :meth:`accept`. Its
        capture is not audited for outside reads: inductor's kernels bypass the dispatcher, and a
        recording mode around a compiled call would be traced by dynamo."""
        return CaptureStrategy(capture_forward=self.compiled, accept=self.accept, audits_reads=False)
