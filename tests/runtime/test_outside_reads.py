"""What a graph reads outside its inputs and its own memory: found at capture, held, guarded.

Run on the CPU stand-in (unit layer) and on real CUDA graphs (gpu layer). Each test has a forward
that reaches a tensor nobody passed it (a table an ``lru_cache`` keeps, a tensor in an opaque
argument) and checks the serving contract's "held" clause: the entry keeps that tensor alive, a
write into it since capture drops the entry with a reason that names it, and what the caller binds
by address (the binding's ``bound_storages``: the weights) is read freely, as ComfyUI's in-place patching needs.
"""

import functools
import gc
import weakref

import pytest
import torch

from bcg_runtime.core import CaptureStatus, CaptureStrategy, GraphRunner, RunnerLimits, graph_break
from bcg_runtime.core.cpu_graph import RecordingBackend
from bcg_runtime.core.outside_reads import OutsideReads, storage_keys
from bcg_runtime.core.capture import UNBOUND, CaptureOptions, Unbound, UnkeyedOpaqueRead


def runner_on(device):
    backend = RecordingBackend() if device.type == "cpu" else None
    return GraphRunner(backend=backend, limits=RunnerLimits(), name="test")


class Bound(Unbound):
    """A caller's binding whose state covers these storages (the weights)."""

    def __init__(self, storages):
        self.storages = storages

    def bound_storages(self):
        return self.storages()


class Watching(Unbound):
    """A caller's binding that hands the capture's plain run a watched view of the keyword arguments."""

    def __init__(self, view):
        self.view = view

    def watch(self, kwargs):
        return self.view(kwargs)


class CachedTable(torch.nn.Module):
    """A forward that reads a table through an ``lru_cache`` (as Chroma Radiance's ``fetch_pos``
    does): the table is made by the first call, outside any graph, and kept by the cache only."""

    def __init__(self, device):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16).to(device)
        self.device = device

    @functools.lru_cache(maxsize=1)  # noqa: B019 (the pattern under test: ComfyUI caches tables so)
    def table(self, n):
        return torch.linspace(0.5, 1.5, n, device=self.device)

    def forward(self, x):
        return self.lin(x) * self.table(x.shape[-1])


def same_bits(a, b):
    torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)


def _capture(runner, model, x, binding=UNBOUND):
    result = runner.capture(model, (x,), label="x", binding=binding)
    assert result.status is CaptureStatus.CAPTURED, result
    return result


def test_the_recorder_tells_outside_memory_from_the_forwards_own():
    lin = torch.nn.Linear(4, 4)
    table = torch.randn(4)
    x = torch.randn(2, 4)
    with torch.no_grad(), OutsideReads("cpu") as reads:
        y = lin(x) * table  # weights, input and table: outside
        y = y.view(-1)[:3] + torch.tensor([2.0])  # a view of its own memory and a Python-made tensor: its own
        table.mul_(1.0)  # a write into outside memory
    found = {tuple(r.tensor.shape): r for r in reads.found.values()}
    assert sorted(found) == [(2, 4), (4,), (4, 4)], found  # weight, bias/table (one each), input
    assert len(reads.found) == 4
    outside = reads.outside(storage_keys((x, list(lin.parameters()))))
    assert [r.tensor.untyped_storage().data_ptr() for r in outside] == [table.untyped_storage().data_ptr()]
    assert outside[0].written and outside[0].op.startswith("aten.mul")
    assert "float32[4] (first read by aten.mul" in outside[0].describe()
    assert not any(r.written for r in reads.found.values() if r is not outside[0])


def test_the_audit_walks_an_ops_arguments_as_pytree_does():
    """The audit's own walk of what an op takes and returns (it skips pytree on the hot path)
    finds the tensors :func:`plain_tensors` finds, a subclass's inner tensors in its place."""
    from torch.testing._internal.two_tensor import TwoTensor

    from bcg_runtime.core.outside_reads import _op_tensors, plain_tensors

    a, b, c = torch.randn(2), torch.randn(3), torch.randn(4)
    pair = TwoTensor(torch.randn(5), torch.randn(5))
    trees = [
        ((a, 1.0, [b, None, c], (pair,), torch.Size([2])), {"out": a, "alpha": 2}),
        [],
        (torch.nn.Parameter(b),),
        pair,
    ]
    for tree in trees:
        assert [id(t) for t in _op_tensors(tree, [])] == [id(t) for t in plain_tensors(tree)]
    assert [id(t) for t in _op_tensors(pair, [])] == [id(pair.a), id(pair.b)]


def test_a_cached_table_the_cache_drops_stays_alive_under_the_graph(device):
    model = CachedTable(device)
    x = torch.randn(2, 16, device=device)
    runner = runner_on(device)
    with torch.inference_mode():
        model(x)  # the first call makes the table, as a sampler's first step would
        table = weakref.ref(model.table(16))
        _capture(runner, model, x, Bound(lambda: storage_keys(list(model.parameters()))))
        entry = next(iter(runner.table.entries.values()))
        assert [held.read.tensor.shape for held in entry.outside] == [torch.Size([16])], entry.outside
        CachedTable.table.cache_clear()  # the cache lets go (maxsize reached by another key, a clear)
        gc.collect()
        assert table() is not None, "the entry must hold the table its graph reads"
        churn = [torch.full((16,), float("nan"), device=device) for _ in range(64)]  # reuse freed memory
        y = torch.randn(2, 16, device=device)
        out = runner(model, (y,), label="x")
        assert runner.stats.hits == 1
        assert torch.equal(out, model(y)), "the replay reads the table it captured, as eager recomputes it"
        del churn


def test_a_write_into_an_outside_tensor_drops_the_entry_with_its_name(device):
    table = torch.linspace(0.5, 1.5, 16, device=device)

    def forward(x):
        return x * table + 1

    x = torch.randn(2, 16, device=device)
    runner = runner_on(device)
    with torch.no_grad():
        _capture(runner, forward, x)
        assert torch.equal(runner(forward, (x,), label="x"), forward(x)) and runner.stats.hits == 1
        table.mul_(2)  # somebody edits the table in place: a replay would read the new values only by luck
        out = runner(forward, (x,), label="x")
    assert runner.stats.hits == 1, "the written table must not be replayed over"
    assert torch.equal(out, forward(x))
    (reason,) = runner.stats.eager
    assert reason.startswith("graph dropped: a tensor it reads outside its arguments and weights was written"), reason
    assert "float32[16]" in reason
    with torch.no_grad():
        assert runner.capture(forward, (x,), label="x").status is CaptureStatus.CAPTURED  # captured again


def test_weights_the_caller_binds_are_read_freely(device):
    """ComfyUI patches weights in place (a LoRA applied into them): the graph reads them by
    address and must see the new values, so the caller's bound storages are not guarded."""
    model = torch.nn.Linear(16, 16).to(device)
    x = torch.randn(2, 16, device=device)
    runner = runner_on(device)
    with torch.no_grad():
        _capture(runner, model, x, Bound(lambda: storage_keys(list(model.parameters()))))
        assert next(iter(runner.table.entries.values())).outside == []
        model.weight.add_(0.25)  # in place, version counter moved
        out = runner(model, (x,), label="x")
        assert runner.stats.hits == 1, "a bound weight written in place still replays"
        assert torch.equal(out, model(x))


def test_a_tensor_the_forward_writes_itself_is_held_not_guarded(device):
    state = torch.zeros(16, device=device)

    def forward(x):
        state.copy_(x[0])  # the forward keeps a copy of its input (a replay writes it the same way)
        return x * 2 + state

    x = torch.randn(2, 16, device=device)
    runner = runner_on(device)
    with torch.no_grad():
        _capture(runner, forward, x)
        (held,) = next(iter(runner.table.entries.values())).outside
        assert held.read.written and held.version is None and held.bits is None
        forward(x)  # an eager call moves the version
        y = torch.randn(2, 16, device=device)
        out = runner(forward, (y,), label="x")
        assert runner.stats.hits == 1 and torch.equal(out, forward(y))


def test_an_opaque_argument_tensor_is_held_and_guarded_where_the_key_holds_it(device):
    """An opaque argument is passed as it is at capture: its tensors are outside reads like any
    other, served only where the caller keys them by value (``opaque_keyed``)."""

    def forward(x, options):
        return x * options["scale"]

    options = {"scale": torch.full((16,), 3.0, device=device)}
    x = torch.randn(2, 16, device=device)
    backend = RecordingBackend() if device.type == "cpu" else None
    runner = GraphRunner(backend=backend, name="test", options=CaptureOptions(opaque_keyed=frozenset({"options"})))
    with torch.no_grad():
        result = runner.capture(forward, (x,), {"options": options}, opaque=("options",), label="x")
        assert result.status is CaptureStatus.CAPTURED
        (held,) = next(iter(runner.table.entries.values())).outside
        assert held.version is not None and tuple(held.read.tensor.shape) == (16,)
        options["scale"].fill_(5.0)
        runner(forward, (x,), {"options": options}, opaque=("options",), label="x")
    assert runner.stats.hits == 0
    assert any("was written since capture" in r for r in runner.stats.eager)


def test_a_tensor_read_from_an_unkeyed_opaque_argument_fails_the_capture(device):
    """``transformer_options`` is opaque and keyed only by the plain values options.py knows: a
    forward that reads a tensor from it (the step's sigmas, say) would replay the captured call's
    value at every step, and the proof, made on that same call, could not see it."""

    def forward(x, transformer_options):
        return x * transformer_options["sigmas"]

    x = torch.randn(2, 16, device=device)
    runner = runner_on(device)
    with torch.no_grad():
        options = {"sigmas": torch.full((1,), 0.7, device=device), "cond_or_uncond": [0]}
        result = runner.capture(
            forward, (x,), {"transformer_options": options}, opaque=("transformer_options",), label="x"
        )
        assert result.status is CaptureStatus.FAILED, result
        assert "reads transformer_options['sigmas'] (float32[1]" in result.reason, result.reason
        assert torch.equal(result.output, forward(x, options))  # answered with eager
        assert runner.table.entries == {}


class WatchedOrder(dict):
    """The caller's side of binding's ``watch`` in little: reading ``cond_or_uncond`` raises, as the
    comfy layer's view does for each bookkeeping entry (bcg_runtime/comfy/options.py)."""

    def __getitem__(self, name):
        if name == "cond_or_uncond":
            raise UnkeyedOpaqueRead(f"the forward reads transformer_options[{name!r}]")
        return super().__getitem__(name)


def swaps_halves_by_order(seen):
    """A forward that steers by a plain value of an opaque argument, as 0.33.0's SeedVR2 swaps its
    output halves by ``cond_or_uncond`` (comfy/ldm/seedvr/model.py:1361); ``seen`` gets the type
    of the options each run was handed."""

    def forward(x, transformer_options):
        seen.append(type(transformer_options))
        return x.flip(0) * 1 if transformer_options["cond_or_uncond"] == [1, 0] else x * 1

    return forward


@pytest.mark.parametrize("strategy", ["exact", "captures another callable"])
def test_a_plain_value_read_from_an_opaque_argument_fails_the_capture_through_the_callers_view(device, strategy):
    """A list that steers a branch reaches no op, so the audit cannot see it: without a view the
    capture freezes the captured call's branch and replays it for a call of the other order. The
    runner hands the caller's binding's ``watch`` view to the capture's one plain run of the live
    call (the proof's eager, or the accept check's where the strategy captures another callable):
    the capture fails naming the entry, nothing is stored, the key is blocked and the call is
    answered by eager on its own options."""
    capture_forward = (lambda fn: fn) if strategy == "exact" else (lambda fn: functools.partial(fn))
    chosen = CaptureStrategy(capture_forward=capture_forward, accept=None if strategy == "exact" else lambda a, b: None)
    opaque = {"opaque": ("transformer_options",), "label": "x", "strategy": chosen}
    x = torch.arange(4.0, device=device).reshape(2, 2)
    captured, other = {"cond_or_uncond": [1, 0]}, {"cond_or_uncond": [0, 1]}
    backend = RecordingBackend() if device.type == "cpu" else None
    with torch.no_grad():
        blind = GraphRunner(backend=backend, name="blind")
        forward = swaps_halves_by_order([])
        assert (
            blind.capture(forward, (x,), {"transformer_options": captured}, **opaque).status is CaptureStatus.CAPTURED
        )
        wrong = blind(forward, (x,), {"transformer_options": other}, opaque=("transformer_options",), label="x")
        assert not torch.equal(wrong, forward(x, other))  # the captured order, replayed: a wrong latent

        seen: list = []
        watching = GraphRunner(backend=backend, name="watching")
        view = Watching(lambda kw: {**kw, "transformer_options": WatchedOrder(kw["transformer_options"])})
        result = watching.capture(
            swaps_halves_by_order(seen), (x,), {"transformer_options": captured}, **opaque, binding=view
        )
        assert result.status is CaptureStatus.FAILED, result
        assert "reads transformer_options['cond_or_uncond']" in result.reason, result.reason
        assert seen.count(WatchedOrder) == 1 and seen[-1] is dict, seen  # one plain run watched; the answer unwatched
        assert torch.equal(result.output, forward(x, captured))
        assert watching.table.entries == {} and list(watching.blocked().values()) == [result.reason]


def test_a_break_reads_the_live_call_and_only_its_arguments_are_the_graphs(device):
    """A break runs again at every replay, so a tensor it fetches itself (the attention break
    fetches this call's ``transformer_options`` and a sigma-dependent override reads its
    ``sigmas``) is the live call's, never the graph's: not held, not refused. What it is passed is
    carried from the capture into every replay, so a tensor of an unkeyed opaque argument passed
    to a break still fails the capture."""
    live: dict = {}

    def scale_by_live_sigma(h):
        return h * live["options"]["sigmas"]

    def forward(x, transformer_options):
        return graph_break(scale_by_live_sigma, x + 1) - 1

    def passes_it_on(x, transformer_options):
        return graph_break(torch.mul, x + 1, transformer_options["sigmas"]) - 1

    x = torch.randn(2, 16, device=device)
    opaque = {"opaque": ("transformer_options",), "label": "x"}
    runner = runner_on(device)
    with torch.no_grad():
        for step, sigma in enumerate((0.9, 0.6, 0.3)):
            options = live["options"] = {"sigmas": torch.full((1,), sigma, device=device)}
            if step == 0:
                result = runner.capture(forward, (x,), {"transformer_options": options}, **opaque)
                assert result.status is CaptureStatus.CAPTURED, result
                assert next(iter(runner.table.entries.values())).outside == []
            else:
                out = runner(forward, (x,), {"transformer_options": options}, **opaque)
                assert torch.equal(out, forward(x, options)), sigma  # this step's sigma, not the capture's
        assert runner.stats.hits == 2 and not runner.stats.eager, runner.stats

        result = runner_on(device).capture(passes_it_on, (x,), {"transformer_options": options}, **opaque)
        assert result.status is CaptureStatus.FAILED, result
        assert "reads transformer_options['sigmas']" in result.reason and "first read by graph_break(" in result.reason


def test_an_inference_tensor_is_guarded_by_its_bits_once_per_state(device):
    """ComfyUI samples under ``torch.inference_mode``: tensors made there keep no version counter,
    so the entry keeps a copy of their bits and compares it once per ``state`` object (a run)."""
    with torch.inference_mode():
        table = torch.linspace(0.5, 1.5, 16, device=device)
        table[3] = float("nan")  # a NaN equals itself bit for bit: no false "written"
        x = torch.randn(2, 16, device=device)
        runner = runner_on(device)
        forward = lambda x: x * table  # noqa: E731
        run1, run2 = ["run"], ["run"]  # equal, as two runs' fingerprints of one model are, and two objects
        assert runner.capture(forward, (x,), label="x", state=run1).status is CaptureStatus.CAPTURED
        (held,) = next(iter(runner.table.entries.values())).outside
        assert held.version is None and held.read.tensor.is_inference() and held.bits is not None
        same_bits(runner(forward, (x,), label="x", state=run1), forward(x))
        table[0] = 7.0  # somebody writes the table mid-run: seen at the next run's first call
        runner(forward, (x,), label="x", state=run1)
        assert runner.stats.hits == 2 and not runner.stats.eager
        out = runner(forward, (x,), label="x", state=run2)
    assert runner.stats.hits == 2, "the written inference table must not be replayed over"
    same_bits(out, forward(x))
    (reason,) = runner.stats.eager
    assert "was written since capture (float32[16]" in reason, reason


@pytest.mark.parametrize("outside", [False, True])
def test_the_capture_line_names_what_it_holds(device, caplog, outside):
    table = torch.ones(16, device=device)
    forward = (lambda x: x * table) if outside else (lambda x: x * 2)
    with torch.no_grad():
        _capture(runner_on(device), forward, torch.randn(2, 16, device=device))
    (line,) = [r.getMessage() for r in caplog.records if "captured x" in r.getMessage()]
    assert ("holds 1 tensor(s) it reads outside its arguments and weights: float32[16]" in line) is outside, line
