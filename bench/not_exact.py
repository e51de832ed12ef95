"""Why a capture is not bit-equal: ``python -m bench.not_exact --family ltxav --size 512x512x1 --batch 2``.

The runner drops a graph whose proof replay differs from eager (``replay not exact``) and the call
runs eager: safe, but the family cannot be called verified until the cause is known. This tool
takes one real DiT call of a synthetic model (the first call of a KSampler-path run, recorded
where BCG's own hook sees it: :func:`watch_dit_calls`) and answers, in order:

1. **Is eager itself deterministic?** The forward twice on the same inputs: if the two differ,
   no graph can be proven and the cause is a non-deterministic kernel, not the capture. Then the
   forward once more after the caching allocator's free memory was filled with 0x00 and once after
   0xFF (NaN in every float dtype): a forward that reads memory it never wrote gives another
   output, so its eager is deterministic only while the allocator happens to hand out the same
   bytes (a fresh process: zeros), and a proven graph can still differ from a later eager.
2. **Does the capture freeze a value?** The runner captures on shifted inputs so that a frozen
   value shows up in the proof; a capture on the live inputs themselves that is exact, where the
   shifted one is not, means the graph holds something computed from the capture's inputs.
3. **Where does the replay leave eager?** Every block's outputs are cloned inside the capture
   (graph-pool tensors the replay rewrites) and compared with eager's: the first block that
   differs, and by how much, per block.

4. **With ``--eager-twice STEPS``: where does eager sampling itself stop reproducing?** The same
   run (size, cfg 2.5, seed) sampled twice with every DiT call's arguments and output recorded:
   the first call whose inputs differ between the two runs (the difference came from outside the
   DiT: conditioning, sampler, a previous call) and the first whose output differs on equal
   inputs (the DiT's own kernels).

Prints one line per finding (``not_exact: ...``) and writes them to ``--json``. Needs CUDA.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import operator
import sys
import types
from typing import Any

import torch

log = logging.getLogger("bcg.not_exact")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.not_exact", description=__doc__.split("\n\n")[0])
    p.add_argument("--family", required=True, help="a synthetic family (bench.synthetic.FAMILIES)")
    p.add_argument("--size", default="512x512", help="WIDTHxHEIGHT or WIDTHxHEIGHTxFRAMES (video families)")
    p.add_argument("--batch", type=int, default=2, help="DiT batch: 2 = cond and uncond batched (cfg > 1)")
    p.add_argument(
        "--depth",
        default=None,
        help="blocks per stack, or a comma list, one per block kind (default: the family's GPU test depth)",
    )
    p.add_argument(
        "--prior-batch",
        type=int,
        default=None,
        help="capture a call of this batch first on the same runner (the target then runs no warm-up: its proof's eager run comes first)",
    )
    p.add_argument(
        "--through-session",
        default=None,
        metavar="MODE",
        help="also warm the size up through BCG Apply in MODE (auto, full, breakable) and BCG Warmup "
        "Capture's path with the recipe's two prompt lengths, batch 1 then 2, and report each capture",
    )
    p.add_argument(
        "--sample",
        type=int,
        default=0,
        metavar="STEPS",
        help="with --through-session: then sample STEPS steps eager and through the warmed model (BCG "
        "Apply's verify on) at cfg 1 and 2.5: whether each run equals eager, and each verify line",
    )
    p.add_argument(
        "--warm",
        default=None,
        metavar="SIZES",
        help="with --through-session: the warm-up's resolutions (default: --size), e.g. '512x512x1, 1024x1024x1'",
    )
    p.add_argument("--verify", action="store_true", help="with --sample: BCG Apply's verify on")
    p.add_argument("--session-only", action="store_true", help="only the --through-session part")
    p.add_argument(
        "--contiguous-gapped",
        action="store_true",
        help="static buffers of gapped views contiguous, as before trees kept their strides (to compare)",
    )
    p.add_argument(
        "--eager-twice",
        type=int,
        default=0,
        metavar="STEPS",
        help="sample STEPS steps eager twice at --size, cfg 2.5, and compare every DiT call of the two runs "
        "(inputs, then outputs); without --through-session this is all that runs",
    )
    p.add_argument(
        "--fill-gib",
        type=float,
        default=16.0,
        help="GiB of the allocator's free memory filled before each eager call of the unwritten-memory check",
    )
    p.add_argument("--json", default="bench_out/not_exact.json", help="write the findings here")
    return p.parse_args(argv)


#: The bytes the allocator's free memory is filled with before an eager call: 0x00 reads as zero in
#: every dtype, 0xFF as NaN in every float dtype (-1 in integers).
FILL_BYTES = (0x00, 0xFF)
#: Block sizes the fill takes, largest first, so that requests of every size the forward makes find
#: a filled block (the allocator hands a request the smallest cached block that fits it; requests of
#: 1 MiB and less come from 2 MiB segments of their own pool).
_FILL_BLOCKS = ((1 << 30, 0.25), (256 << 20, 0.25), (64 << 20, 0.25), (8 << 20, 0.1), (2 << 20, 0.05), (512 << 10, 0.1))


def fill_free_memory(byte: int, device: torch.device, gib: float = 16.0) -> int:
    """Leave up to ``gib`` GiB of the caching allocator's free blocks holding ``byte`` (capped at
    70% of what the device has free): they are allocated, filled and freed, and the allocator keeps
    them cached for the next requests. Returns the bytes filled."""
    torch.cuda.synchronize(device)
    torch.cuda.empty_cache()
    free, _ = torch.cuda.mem_get_info(device)
    budget = min(int(gib * (1 << 30)), int(free * 0.7))
    held, filled = [], 0
    for size, share in _FILL_BLOCKS:
        for _ in range(int(budget * share) // size):
            held.append(torch.full((size,), byte, dtype=torch.uint8, device=device))
            filled += size
    torch.cuda.synchronize(device)
    del held
    return filled


def eager_reads_unwritten(
    forward, device: torch.device, gib: float = 16.0, root: torch.nn.Module | None = None
) -> dict[str, Any]:
    """``forward()`` after the free memory was filled with each of :data:`FILL_BYTES`, then with the
    first again: ``max_abs`` over the outputs (0.0: the output does not depend on what the
    allocator hands out), ``repeat_max_abs`` (the first fill twice), ``nan_outputs`` (outputs with
    a NaN after the 0xFF fill) and ``filled_bytes``. With ``root``, a digest of every submodule's
    output is kept too (:func:`_digest`) and ``first_module`` names the first one, in the order they
    returned, whose output differs between the two fills (the innermost module that read what it never wrote, or took
    such a value from an op outside any module)."""
    from bcg_runtime.core.trees import flatten_inputs

    runs: list[list[tuple[str, Any]]] = []
    handles = []
    if root is not None:
        for name, module in root.named_modules():

            def keep(module, inputs, output, name=name):
                runs[-1].append((name, _digest(output)))

            handles.append(module.register_forward_hook(keep))
    outputs, filled = [], 0
    try:
        for byte in (*FILL_BYTES, FILL_BYTES[0]):
            filled = fill_free_memory(byte, device, gib)
            runs.append([])
            outputs.append(forward())
    finally:
        for handle in handles:
            handle.remove()
    nan = sum(bool(t.is_floating_point() and t.isnan().any()) for t in flatten_inputs(outputs[1])[0])
    found = {
        "max_abs": outputs_diff(outputs[0], outputs[1]),
        "repeat_max_abs": outputs_diff(outputs[0], outputs[2]),
        "nan_outputs": nan,
        "filled_bytes": filled,
    }
    if root is not None:
        found["first_module"] = next(
            (name for (name, a), (_, b) in zip(runs[0], runs[1]) if not torch.equal(a, b)),
            None,
        )
    return found


def _digest(output: Any) -> torch.Tensor:
    """A small fingerprint of a module's output, kept on the device (no sync, a few bytes): for each
    tensor found in it (:func:`_tensors`), its sum in float64 and its NaN count. Two outputs with
    different values almost surely differ here."""
    parts = [torch.stack((t.detach().double().sum(), t.isnan().sum().double())) for t in _tensors(output) if t.numel()]
    return torch.cat(parts) if parts else torch.zeros(0, dtype=torch.float64)


def plain_forward(dm) -> Any:
    """The DiT's own forward, without ComfyUI's wrapper dispatch: ``_forward`` where the class's
    ``forward`` runs the DIFFUSION_MODEL WrapperExecutor, else the class's ``forward`` itself (SD3's
    ``MMDiT`` runs none), bound to ``dm`` past any object patch of ``forward``."""
    return getattr(dm, "_forward", None) or types.MethodType(type(dm).forward, dm)


def watch_dit_calls(patched, key: str, wrapper) -> None:
    """``wrapper(executor, *args, **kwargs)`` around every DiT call of ``patched`` (a clone the
    caller owns), where BCG's hook sees the call: a DIFFUSION_MODEL wrapper where the class's
    ``forward`` runs them, else the object patch ``diffusion_model.forward`` (as BCG Apply patches
    SD3's ``MMDiT``), whose executor is :func:`plain_forward`."""
    import comfy.patcher_extension as pe

    dm = patched.get_model_object("diffusion_model")
    if hasattr(type(dm), "_forward"):
        pe.add_wrapper_with_key(
            pe.WrappersMP.DIFFUSION_MODEL, key, wrapper, patched.model_options, is_model_options=True
        )
        return
    forward = plain_forward(dm)
    patched.add_object_patch("diffusion_model.forward", lambda *args, **kwargs: wrapper(forward, *args, **kwargs))


def record_first_call(model, family: str, width: int, height: int, frames: int | None, batch: int):
    """``(diffusion_model, args, kwargs)`` of the first DiT call of a KSampler-path run (cfg 2.5
    when ``batch`` is 2, so cond and uncond reach the DiT together), its tensors cloned."""
    from bcg_runtime.comfy import api
    from bcg_runtime.core.trees import map_tensors

    from . import synthetic

    calls: list[tuple] = []

    def wrapper(executor, *args, **kwargs):
        if not calls:
            calls.append(map_tensors((args, kwargs), lambda t: t.clone()))
        return executor(*args, **kwargs)

    patched = model.clone()
    watch_dit_calls(patched, "bcg_not_exact", wrapper)
    info = synthetic.family_info(family)
    positive = synthetic.make_conditioning(family, info.prompt_lengths[0], seed=1)
    negative = synthetic.make_conditioning(family, info.prompt_lengths[0], seed=2)  # one length: one batch
    cfg = 2.5 if batch == 2 else 1.0
    synthetic.sample(patched, family, width, height, 1, cfg, positive, negative, seed=7, frames=frames)
    ((args, kwargs),) = calls
    dm = patched.model.diffusion_model
    # Every argument by name, as BCG's hook names them, so transformer_options (positional in
    # some forwards) is the runner's opaque argument, not a part of the key.
    return dm, (), api.bind_call(dm, args, kwargs)


def record_calls(
    model, family: str, width: int, height: int, frames: int | None, steps: int, modules: bool = False
) -> list[tuple]:
    """Every DiT call of one eager KSampler-path run (cfg 2.5, seed 7): ``(arguments, output)``
    each, tensors cloned (on the device: a full-size model's calls at a test size are small). With
    ``modules``, a third element: ``(name, digest)`` of every submodule's output and of every
    attention call's operands and output (:func:`_sdpa_digests`) in the order they returned
    (:func:`_digest`), so that :func:`compare_runs` can name the first module that parted."""
    from bcg_runtime.core.trees import map_tensors

    from . import synthetic

    calls: list[tuple] = []
    digests: list[tuple[str, torch.Tensor]] = []

    def wrapper(executor, *args, **kwargs):
        inputs = map_tensors((args, kwargs), lambda t: t.clone())
        digests.clear()
        out = executor(*args, **kwargs)
        recorded = (inputs, map_tensors(out, lambda t: t.clone()))
        calls.append((*recorded, list(digests)) if modules else recorded)
        return out

    patched = model.clone()
    watch_dit_calls(patched, "bcg_not_exact_calls", wrapper)
    handles = []
    if modules:
        for name, module in patched.model.diffusion_model.named_modules():

            def keep(module, inputs, output, name=name):
                digests.append((name, _digest(output)))

            handles.append(module.register_forward_hook(keep))
    info = synthetic.family_info(family)
    positive, negative = (synthetic.make_conditioning(family, n, seed=s) for n, s in zip(info.prompt_lengths, (1, 2)))
    attention = _sdpa_digests(digests) if modules else contextlib.nullcontext()
    try:
        with attention:
            synthetic.sample(patched, family, width, height, steps, 2.5, positive, negative, seed=7, frames=frames)
    finally:
        for handle in handles:
            handle.remove()
    return calls


@contextlib.contextmanager
def _sdpa_digests(digests: list[tuple[str, torch.Tensor]]):
    """Every ``F.scaled_dot_product_attention`` call for the duration as two digest entries, its
    operands and its output, named by the backend torch picks for it and the operands' layout
    (:func:`_sdpa_name`): a run that parts at an attention then says which kernel served it and
    whether its operands were already different. ComfyUI's attention looks the function up on
    ``torch.nn.functional`` at each call, so replacing it there sees every call."""
    import torch.nn.functional as F

    original = F.scaled_dot_product_attention

    def recorded(q, k, v, *args, **kwargs):
        name = _sdpa_name(q, k, v, *args, **kwargs)
        digests.append((f"{name} operands", _digest((q, k, v))))
        out = original(q, k, v, *args, **kwargs)
        digests.append((name, _digest(out)))
        return out

    F.scaled_dot_product_attention = recorded
    try:
        yield
    finally:
        F.scaled_dot_product_attention = original


def _sdpa_name(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False) -> str:
    """``sdpa[BACKEND] q=shape/stride@addr%256 k=... v=...``: the backend as torch's selection
    (``torch._fused_sdp_choice``) picks it under the order in force, each operand's layout and
    its address modulo 256 (kernels pick tiles and vector widths by alignment)."""
    from torch.nn.attention import SDPBackend

    try:
        choice = torch._fused_sdp_choice(q, k, v, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa)
        backend = SDPBackend(choice).name
    except Exception as e:  # a private API: name what it said rather than lose the record
        backend = f"unknown ({type(e).__name__})"

    def layout(t) -> str:
        return f"{tuple(t.shape)}/{t.stride()}@{t.data_ptr() % 256}"

    return f"sdpa[{backend}] q={layout(q)} k={layout(k)} v={layout(v)}"


def rerun_call(model, call: tuple, times: int = 2) -> list[float | None]:
    """The recorded call's forward run again ``times`` times on its recorded arguments: each
    output's max abs difference from the recorded one (all 0.0: the call repeats itself on its
    inputs, so a difference between two runs came from state its arguments do not show)."""
    (args, kwargs), output = call[0], call[1]
    dm = model.model.diffusion_model
    with torch.no_grad():
        return [outputs_diff(output, plain_forward(dm)(*args, **kwargs)) for _ in range(times)]


def compare_runs(first: list[tuple], second: list[tuple]) -> dict[str, Any]:
    """Call by call: ``calls`` (per run), ``first_input_differing`` and ``first_output_differing``
    (``(index, max abs)`` or None; the latter among calls whose inputs were equal), ``per_call``
    (``(input max abs, output max abs)`` each) and, where both runs kept module digests
    (``record_calls(modules=True)``), ``first_module_differing``: the first submodule (or
    attention call, :func:`_sdpa_digests`) whose output parted in the first call with equal inputs
    and another output, and ``second_run_names_it`` where the second run's entry there has another
    name (an attention whose backend or layout differed)."""
    per_call = [(tensors_diff(a[0], b[0]), tensors_diff(a[1], b[1])) for a, b in zip(first, second)]
    inputs = next(((i, d) for i, (d, _) in enumerate(per_call) if d != 0.0), None)
    outputs = next(((i, o) for i, (d, o) in enumerate(per_call) if d == 0.0 and o != 0.0), None)
    found = {
        "calls": (len(first), len(second)),
        "first_input_differing": inputs,
        "first_output_differing": outputs,
        "per_call": per_call,
    }
    if outputs is not None and len(first[outputs[0]]) > 2 and len(second[outputs[0]]) > 2:
        pairs = zip(first[outputs[0]][2], second[outputs[0]][2])
        parted = next(((a, b) for a, b in pairs if a[1].shape != b[1].shape or not torch.equal(a[1], b[1])), None)
        found["first_module_differing"] = parted and parted[0][0]
        if parted and parted[1][0] != parted[0][0]:  # an attention served otherwise the second time
            found["second_run_names_it"] = parted[1][0]
    return found


def torch_state() -> dict[str, Any]:
    """The process settings that can make one forward give other bits than before: torch's
    determinism and cuDNN switches, matmul/SDPA flags and the pack's fingerprint of kernel settings
    (printed beside a run that does not repeat itself, to compare with a fresh process's)."""
    from bcg_runtime.comfy import kernel_settings

    b = torch.backends
    state: dict[str, Any] = {
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "cudnn.benchmark": b.cudnn.benchmark,
        "cudnn.deterministic": b.cudnn.deterministic,
        "cudnn.allow_tf32": b.cudnn.allow_tf32,
        "matmul.allow_tf32": b.cuda.matmul.allow_tf32,
        "matmul.bf16_reduced": b.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "matmul.fp16_reduced": b.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "sdpa": (b.cuda.flash_sdp_enabled(), b.cuda.mem_efficient_sdp_enabled(), b.cuda.cudnn_sdp_enabled()),
    }
    with contextlib.suppress(Exception):
        state["kernel_settings"] = kernel_settings.kernel_settings()
    return state


def tensors_diff(a: Any, b: Any) -> float | None:
    """Largest absolute difference over the tensors found in two values (:func:`_tensors`: a call's
    arguments hold functions too, which are ignored), 0.0 when equal, None when they hold
    different numbers or shapes of tensors."""
    ta, tb = _tensors(a), _tensors(b)
    if len(ta) != len(tb) or any(x.shape != y.shape for x, y in zip(ta, tb)):
        return None
    return _max_abs(ta, tb)


def _max_abs(xs: list[torch.Tensor], ys: list[torch.Tensor]) -> float:
    """The largest absolute difference over pairs of same-shaped tensors (in float64), 0.0 when
    every pair is equal."""
    return max(
        ((x.double() - y.double()).abs().max().item() for x, y in zip(xs, ys) if not torch.equal(x, y)), default=0.0
    )


def _tensors(value: Any, depth: int = 0) -> list[torch.Tensor]:
    """The tensors in a value, in order, through tuples, lists, dicts and objects' attributes
    (four levels down); anything else is no tensor."""
    if isinstance(value, torch.Tensor):
        return [value]
    if depth >= 4:
        return []
    if isinstance(value, (tuple, list)):
        items = value
    elif isinstance(value, dict):
        items = value.values()
    elif hasattr(value, "__dict__") and not callable(value):
        items = vars(value).values()
    else:
        return []
    return [t for v in items for t in _tensors(v, depth + 1)]


def outputs_diff(a: Any, b: Any) -> float | None:
    """Largest absolute difference over two outputs' tensors, 0.0 when equal, None when the
    structures differ."""
    from bcg_runtime.core.trees import flatten_inputs

    la, sa = flatten_inputs(a)
    lb, sb = flatten_inputs(b)
    if sa != sb:
        return None
    return _max_abs(la, lb)


class BlockTap:
    """Clones every block's output into :attr:`eager` (outside a capture) or :attr:`captured`
    (inside one: graph-pool tensors that each replay rewrites)."""

    def __init__(self, blocks: list[torch.nn.Module]):
        from bcg_runtime.core.trees import map_tensors

        self.eager: list[Any] = []
        self.captured: list[Any] = []
        self.recording = False

        def hook(module, inputs, output):
            if not self.recording:
                return
            capturing = torch.cuda.is_initialized() and torch.cuda.is_current_stream_capturing()
            target = self.captured if capturing else self.eager
            target.append(map_tensors(output, lambda t: t.clone()))

        self.handles = [b.register_forward_hook(hook) for b in blocks]

    def close(self) -> None:
        for h in self.handles:
            h.remove()


def capture_once(
    dm, args, kwargs, shift: bool, tap: BlockTap | None = None, prior: tuple | None = None
) -> tuple[str, float | None]:
    """One runner capture of the DiT's :func:`plain_forward` on these inputs: ``(status, max_abs_diff)``.
    ``shift=False`` captures on the live values (the runner's shift off). ``prior``: the
    ``(args, kwargs)`` of another call captured first on the same runner, so that this capture is
    made as a runner makes every capture after its first (as in a session: the proof's eager run
    first, no warm-up run)."""
    from bcg_runtime.core import CaptureOptions, GraphRunner
    from bcg_runtime.core import capture as capture_module

    runner = GraphRunner(name="not_exact", options=CaptureOptions(stage_host_copies=True))
    if prior is not None:
        runner.capture(plain_forward(dm), prior[0], prior[1], opaque=("transformer_options",))
    undo = contextlib.nullcontext()
    if not shift:
        saved = capture_module.shift_floats
        capture_module.shift_floats = lambda tensors: None

        @contextlib.contextmanager
        def restore():
            try:
                yield
            finally:
                capture_module.shift_floats = saved

        undo = restore()
    with undo:
        if tap is not None:
            tap.recording = True
        try:
            result = runner.capture(plain_forward(dm), args, kwargs, opaque=("transformer_options",))
        finally:
            if tap is not None:
                tap.recording = False
    status = result.status.name
    diff = result.max_abs_diff
    if result.reason:
        status = f"{status} ({result.reason})"
    runner.reset()
    return status, diff


def through_session(
    model, family: str, size: str, mode: str, steps: int = 0, warm: str | None = None, verify: bool = False
) -> list[str]:
    """The size warmed up as a user's workflow does it (``api.apply`` with captures at warm-up
    only, then ``api.warm_up`` with the recipe's prompt lengths for cond and uncond, batch sizes
    1 and 2): one line per capture, its label, whether its proof was exact and by how much not.
    ``warm``: the warm-up's resolutions instead of ``size``. ``steps``: then sample that many
    steps at ``size``, cfg 1 and 2.5, eager and through the warmed model, the allocator churned
    between them as test_full_size_cuda does; ``verify``: BCG Apply's verify on (each label's
    first replay compared with eager, one line each)."""
    from bcg_runtime.comfy import api

    from . import synthetic

    info = synthetic.family_info(family)
    positive, negative = (synthetic.make_conditioning(family, n, seed=s) for n, s in zip(info.prompt_lengths, (1, 2)))
    warmed = api.apply(model, mode, capture="warm-up only", verify=verify)
    report = api.warm_up(warmed, warm or size, "", "1,2", positive, negative)
    lines = [line.strip() for line in report.text().splitlines() if line.strip()]
    session = api.session_of(warmed)
    lines.append(f"captures {session.runner.stats.captures}, blocked {session.runner.blocked()}")
    parts = [int(p) for p in size.lower().split("x")]
    frames = parts[2] if len(parts) > 2 else None
    for cfg in (1.0, 2.5) if steps else ():
        verified = _LogLines("verify")
        logging.getLogger("bcg_runtime").addHandler(verified)
        try:
            eager = synthetic.sample(
                model, family, parts[0], parts[1], steps, cfg, positive, negative, seed=7, frames=frames
            )
            junk = [torch.empty(64 << 20, dtype=torch.uint8, device="cuda") for _ in range(4)]
            del junk[::2]  # the allocator churned, as test_full_size_cuda does
            out = synthetic.sample(
                warmed, family, parts[0], parts[1], steps, cfg, positive, negative, seed=7, frames=frames
            )
        finally:
            logging.getLogger("bcg_runtime").removeHandler(verified)
        run = session.last_run or {}
        lines.append(
            f"sample {steps} steps cfg {cfg}: {'equal' if torch.equal(out, eager) else 'DIFFERENT'} "
            f"(max abs {(out.float() - eager.float()).abs().max().item():g}), replayed {run.get('replayed')}/"
            f"{run.get('calls')}, eager {dict(run.get('eager') or {})}"
        )
        lines.extend(verified.lines)
    session.runner.reset()
    return lines


class _LogLines(logging.Handler):
    """Keeps the messages that contain ``word``."""

    def __init__(self, word: str):
        super().__init__(logging.INFO)
        self.word, self.lines = word, []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if self.word in message:
            self.lines.append(message)


def standalone(model, args, info, width: int, height: int, frames: int | None) -> dict[str, Any]:
    """Findings 1-3 of the module docstring for the first DiT call of a run at the size."""
    dm, call_args, call_kwargs = record_first_call(model, args.family, width, height, frames, args.batch)
    findings: dict[str, Any] = {}
    with torch.no_grad():
        first = plain_forward(dm)(*call_args, **call_kwargs)
        second = plain_forward(dm)(*call_args, **call_kwargs)
        findings["eager_twice_max_abs"] = outputs_diff(first, second)
        print(f"not_exact: eager twice on the same inputs: max abs {findings['eager_twice_max_abs']}")
        unwritten = eager_reads_unwritten(
            lambda: plain_forward(dm)(*call_args, **call_kwargs), model.load_device, args.fill_gib, root=dm
        )
        findings["eager_after_fill"] = unwritten
        print(
            f"not_exact: eager after the free memory was filled with 0x00 vs 0xFF "
            f"({unwritten['filled_bytes'] / 2**30:.1f} GiB): max abs {unwritten['max_abs']}, 0x00 twice "
            f"{unwritten['repeat_max_abs']}, outputs with NaN after 0xFF {unwritten['nan_outputs']}, first module "
            f"differing {unwritten['first_module']}"
        )

        prior = None
        if args.prior_batch is not None:
            _, prior_args, prior_kwargs = record_first_call(model, args.family, width, height, frames, args.prior_batch)
            prior = (prior_args, prior_kwargs)
        for shift in (True, False):
            status, diff = capture_once(dm, call_args, call_kwargs, shift, prior=prior)
            name = "shifted" if shift else "live"
            findings[f"capture_{name}"] = {"status": status, "max_abs": diff}
            print(f"not_exact: capture on {name} inputs: {status}, max abs {diff}")

        blocks = []
        for attr in info.block_attrs:
            try:
                blocks.extend(operator.attrgetter(attr)(dm))
            except AttributeError:
                continue
        tap = BlockTap(blocks)
        try:
            capture_once(dm, call_args, call_kwargs, True, tap, prior=prior)
            # the proof's last replay ran on the live inputs: the captured clones hold its values
            tap.eager.clear()
            tap.recording = True
            plain_forward(dm)(*call_args, **call_kwargs)
            tap.recording = False
            per_block = [outputs_diff(r, e) for r, e in zip(tap.captured, tap.eager)]
        finally:
            tap.close()
        first_bad = next((i for i, d in enumerate(per_block) if d), None)
        findings["per_block_max_abs"] = per_block
        findings["first_block_differing"] = first_bad
        print(f"not_exact: blocks compared {len(per_block)} (captured {len(tap.captured)}, eager {len(tap.eager)}); "
              f"first differing: {first_bad}; per block: {per_block}")  # fmt: skip

    return findings


def run(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.contiguous_gapped:
        from bcg_runtime.core import trees

        trees._gapped_without_overlap = lambda t: False
    if not torch.cuda.is_available():
        print("not_exact: needs a CUDA GPU (the question is about CUDA graphs)")
        return 2
    import os

    from .setup import setup_comfyui

    setup_comfyui(os.environ.get("COMFYUI_PATH"))
    from . import synthetic

    parts = [int(p) for p in args.size.lower().split("x")]
    width, height = parts[0], parts[1]
    frames = parts[2] if len(parts) > 2 else None
    info = synthetic.family_info(args.family)
    depth = info.gpu_test_depth if args.depth is None else tuple(int(d) for d in args.depth.split(","))
    depth = depth[0] if isinstance(depth, tuple) and len(depth) == 1 else depth
    model = synthetic.load_model(args.family, depth=depth, seed=0, device="cuda")
    findings: dict[str, Any] = {"family": args.family, "size": args.size, "batch": args.batch, "depth": depth}
    if not args.session_only and not args.eager_twice:
        findings.update(standalone(model, args, info, width, height, frames))
    if args.eager_twice:
        with torch.no_grad():
            runs = [record_calls(model, args.family, width, height, frames, args.eager_twice) for _ in range(2)]
        findings["eager_twice_runs"] = found = compare_runs(*runs)
        print(
            f"not_exact: eager sampled twice ({args.eager_twice} steps, cfg 2.5): {found['calls']} DiT calls; first "
            f"call with other inputs {found['first_input_differing']}, first with equal inputs and another output "
            f"{found['first_output_differing']}; per call (inputs, output) max abs {found['per_call']}"
        )
    if args.through_session:
        findings["session"] = through_session(
            model, args.family, args.size, args.through_session, args.sample, args.warm, args.verify
        )
        for line in findings["session"]:
            print(f"not_exact: session {args.through_session}: {line}")

    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(findings, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(run())
