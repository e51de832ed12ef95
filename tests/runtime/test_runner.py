"""GraphRunner and BreakableGraph behaviour, run twice: on the CPU stand-in (unit layer, CI) and
on real CUDA graphs (gpu layer, H200). Every comparison is ``torch.equal`` against eager."""

import gc
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F

from bcg_runtime.core import CaptureStatus, CaptureStrategy, graph_break


class TinyDiT(torch.nn.Module):
    """Enough of a DiT to exercise breaks: blocks of qkv projection, attention as a break, MLP."""

    def __init__(self, n_blocks: int, dim: int = 32, heads: int = 4, break_attention: bool = True):
        super().__init__()
        torch.manual_seed(0)
        self.heads = heads
        self.break_attention = break_attention
        self.blocks = torch.nn.ModuleList(
            torch.nn.ModuleDict(
                {
                    "qkv": torch.nn.Linear(dim, 3 * dim),
                    "out": torch.nn.Linear(dim, dim),
                    "mlp": torch.nn.Linear(dim, dim),
                }
            )
            for _ in range(n_blocks)
        )
        self.head = torch.nn.Linear(dim, dim)

    @staticmethod
    def attention(q, k, v, heads):
        b, n, d = q.shape
        q, k, v = (t.view(b, n, heads, d // heads).transpose(1, 2) for t in (q, k, v))
        return F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)

    def forward(self, x, t, context):
        h = torch.cat([context, x], dim=1) * (1 + t.view(-1, 1, 1))
        for blk in self.blocks:
            q, k, v = blk["qkv"](h).chunk(3, dim=-1)
            a = (
                graph_break(self.attention, q, k, v, self.heads)
                if self.break_attention
                else self.attention(q, k, v, self.heads)
            )
            h = h + blk["out"](a)
            h = h + torch.nn.functional.gelu(blk["mlp"](h))
        return self.head(h[:, context.shape[1] :])


def inputs(device, batch=1, n_img=16, n_txt=8, dim=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    mk = lambda *s: torch.randn(*s, generator=g).to(device)  # noqa: E731
    return mk(batch, n_img, dim), mk(batch), mk(batch, n_txt, dim)


def model_on(device, **kw):
    return TinyDiT(**kw).to(device).eval()


@pytest.mark.parametrize("n_blocks,break_attention,expected_breaks", [(3, False, 0), (1, True, 1), (6, True, 6)])
def test_replay_equals_eager_for_zero_one_and_many_breaks(
    device, make_runner, n_blocks, break_attention, expected_breaks
):
    model = model_on(device, n_blocks=n_blocks, break_attention=break_attention)
    runner = make_runner()
    with torch.inference_mode():
        result = runner.capture(model, inputs(device, seed=0))
        assert result.status is CaptureStatus.CAPTURED
        assert result.entry.breaks == expected_breaks
        assert result.entry.segments == expected_breaks + 1
        for seed in (1, 2):
            args = inputs(device, seed=seed)
            assert torch.equal(runner(model, args), model(*args))
    assert runner.stats.hits == 2 and not runner.stats.eager


def test_new_input_values_give_the_new_answer(device, make_runner):
    model = model_on(device, n_blocks=2)
    runner = make_runner()
    with torch.inference_mode():
        runner.capture(model, inputs(device, seed=0))
        first = runner(model, inputs(device, seed=1))
        second = runner(model, inputs(device, seed=2))
        assert not torch.equal(first, second)
        assert torch.equal(second, model(*inputs(device, seed=2)))


def test_an_uncaptured_call_never_captures_and_names_the_shape(device, make_runner):
    model = model_on(device, n_blocks=2)
    runner = make_runner()
    with torch.inference_mode():
        runner.capture(model, inputs(device, n_img=16))
        for _ in range(2):
            args = inputs(device, n_img=24)
            assert torch.equal(runner(model, args, label="24 tokens"), model(*args))
    assert len(runner.entries()) == 1
    assert runner.stats.eager == {"not captured: 24 tokens": 2}
    assert runner.stats.captures == 1


def test_stats_count_exactly(device, make_runner):
    model = model_on(device, n_blocks=2)
    runner = make_runner()
    with torch.inference_mode():
        assert runner.capture(model, inputs(device, n_img=16), label="A").status is CaptureStatus.CAPTURED
        assert runner.capture(model, inputs(device, n_img=8), label="B").status is CaptureStatus.CAPTURED
        assert runner.capture(model, inputs(device, n_img=8, seed=5)).status is CaptureStatus.ALREADY_CAPTURED
        for _ in range(3):
            runner(model, inputs(device, n_img=16))
        for _ in range(2):
            runner(model, inputs(device, n_img=8))
        runner(model, inputs(device, n_img=4), label="C")
    assert runner.stats.hits == 5
    assert runner.stats.eager == {"not captured: C": 1}
    assert runner.stats.captures == 2
    assert {e.label: (e.hits, e.segments, e.breaks) for e in runner.entries()} == {"A": (3, 3, 2), "B": (2, 3, 2)}
    assert runner.stats.capture_seconds > 0
    assert runner.memory_bytes > 0
    for e in runner.entries():  # each capture's time by phase: warm-up, graph, held reads
        assert min(e.phases) >= 0 and e.phases.graph > 0 and sum(e.phases) <= e.capture_seconds + 1e-6, e.phases
        assert e.as_dict()["capture_ms"] == e.phases.as_ms() and e.proof is not None


def test_outputs_of_two_calls_of_one_shape_do_not_alias(device, make_runner):
    """cond and uncond of one shape replay the same entry; the first result must survive the second."""
    model = model_on(device, n_blocks=2)
    runner = make_runner()
    with torch.inference_mode():
        runner.capture(model, inputs(device))
        cond = runner(model, inputs(device, seed=1))
        uncond = runner(model, inputs(device, seed=2))
        assert cond.data_ptr() != uncond.data_ptr()
        assert torch.equal(cond, model(*inputs(device, seed=1)))
        assert torch.equal(uncond, model(*inputs(device, seed=2)))


def test_allocator_churn_between_captures_stays_exact(device, make_runner):
    """Capture A, capture B, free and allocate in between, replay A: the SGLang weak-ref bug class."""
    model = model_on(device, n_blocks=4)
    runner = make_runner()
    with torch.inference_mode():
        runner.capture(model, inputs(device, n_img=16))
        junk = [torch.randn(1024, 64, device=device) for _ in range(8)]
        runner.capture(model, inputs(device, n_img=12))
        del junk
        gc.collect()
        if device.type == "cuda":
            torch.cuda.empty_cache()
        churn = [torch.full((4096, 16), float(i), device=device) for i in range(16)]
        for seed in (3, 4):
            a, b = inputs(device, n_img=16, seed=seed), inputs(device, n_img=12, seed=seed)
            assert torch.equal(runner(model, a), model(*a))
            assert torch.equal(runner(model, b), model(*b))
        assert all(bool((c == i).all()) for i, c in enumerate(churn)), "replay wrote into memory it does not own"
    assert runner.stats.hits == 4


def test_break_returning_a_tuple_and_a_dict(device, make_runner):
    def split(h):
        return h[..., :8] * 2, h[..., 8:] + 1

    def pack(a, b):
        return {"a": a.sin(), "b": b.cos()}

    def fn(x):
        a, b = graph_break(split, x * 3)
        d = graph_break(pack, a, b)
        return torch.cat([d["a"], d["b"]], dim=-1) * 0.5

    runner = make_runner()
    with torch.inference_mode():
        result = runner.capture(fn, (torch.randn(2, 16, device=device),))
        # Two breaks back to back leave an empty segment between them, which is dropped.
        assert (result.entry.breaks, result.entry.segments) == (2, 2)
        x = torch.randn(2, 16, device=device)
        assert torch.equal(runner(fn, (x,)), fn(x))


def test_output_dicts_and_objects_are_cloned(device, make_runner):
    def fn(x):
        return {"sample": x * 2, "extra": SimpleNamespace(hidden=x + 1, note="n")}

    runner = make_runner()
    with torch.inference_mode():
        runner.capture(fn, (torch.zeros(4, device=device),))
        first = runner(fn, (torch.ones(4, device=device),))
        runner(fn, (torch.full((4,), 7.0, device=device),))
        assert torch.equal(first["sample"], torch.full((4,), 2.0, device=device))
        assert torch.equal(first["extra"].hidden, torch.full((4,), 2.0, device=device))
        assert first["extra"].note == "n"


def test_capture_failure_blocks_only_that_signature(device, make_runner):
    def fn(x):
        y = x * 2
        if x.shape[0] == 3:
            y = y + y.sum().item()  # a host sync: illegal under capture
        return y

    runner = make_runner()
    with torch.inference_mode():
        bad = runner.capture(fn, (torch.ones(3, device=device),))
        good = runner.capture(fn, (torch.ones(4, device=device),))
        assert bad.status is CaptureStatus.FAILED and bad.reason.startswith("capture failed:")
        assert good.status is CaptureStatus.CAPTURED
        x3 = torch.arange(3.0, device=device)
        assert torch.equal(runner(fn, (x3,)), fn(x3))
        x4 = torch.arange(4.0, device=device)
        assert torch.equal(runner(fn, (x4,)), fn(x4))
        assert runner.capture(fn, (x3,)).status is CaptureStatus.SKIPPED
    assert runner.stats.hits == 1
    [(reason, n)] = runner.stats.eager.items()
    assert n == 1 and reason == bad.reason


def test_a_strategy_captures_its_own_forward_and_its_accept_judges_it_against_the_plain_one(device, make_runner):
    """``CaptureStrategy(capture_forward, accept)``: the capture, its warm-up runs and the proof run
    ``capture_forward(fn)`` (mode fast's compiled forward), the replay is proven bit-equal to it,
    and ``accept(captured, plain)`` sees ``fn`` itself run on the live call. A refusal drops the
    proven entry, blocks its key with the reason, and the caller gets the plain output; calls that
    do not replay run ``fn``."""
    runner = make_runner()

    def fn(x):
        return x * 2

    def compiled(f):
        return lambda x: f(x) * 1.5  # differs from fn by design, as fused kernels round otherwise

    seen = []

    def accept(captured, plain):
        seen.append((captured.clone(), plain.clone()))
        return "too far from plain" if captured.shape[0] == 3 else None

    strategy = CaptureStrategy(capture_forward=compiled, accept=accept)
    with torch.inference_mode():
        refused = runner.capture(fn, (torch.ones(3, device=device),), strategy=strategy)
        kept = runner.capture(fn, (torch.ones(4, device=device),), strategy=strategy)
        assert refused.status is CaptureStatus.FAILED and refused.reason == "too far from plain"
        assert torch.equal(refused.output, torch.full((3,), 2.0, device=device))  # the plain forward's
        assert [(c.tolist(), p.tolist()) for c, p in seen] == [([3.0] * 3, [2.0] * 3), ([3.0] * 4, [2.0] * 4)]
        assert kept.status is CaptureStatus.CAPTURED
        x3, x4 = torch.arange(3.0, device=device), torch.arange(4.0, device=device)
        assert torch.equal(runner(fn, (x3,)), x3 * 2)  # refused: plain, counted with the reason
        assert torch.equal(runner(fn, (x4,)), x4 * 3)  # the captured (compiled) graph serves
    assert runner.stats.eager == {"too far from plain": 1} and runner.stats.hits == 1 and runner.stats.captures == 1
    assert list(runner.blocked().values()) == ["too far from plain"]

    def broken_check(captured, plain):
        raise ValueError("cannot compare")

    with torch.inference_mode():  # a check that raises refuses, it does not fail the caller's call
        result = runner.capture(fn, (torch.ones(5, device=device),), strategy=CaptureStrategy(compiled, broken_check))
    assert result.status is CaptureStatus.FAILED and result.reason == "check failed: ValueError: cannot compare"


class _Cancelled(Exception):
    """Stands for ComfyUI's InterruptProcessingException (the runner's ``abort_errors``)."""


def _raising_on_call(n: int, error: BaseException):
    """``x * 2 + 1`` that raises ``error`` on its ``n``-th call only (1-based)."""
    calls = {"n": 0}

    def fn(x):
        calls["n"] += 1
        if calls["n"] == n:
            raise error
        return x * 2 + 1

    return fn, calls


@pytest.mark.parametrize("where", ["proof", "capture"])
def test_out_of_memory_in_capture_or_proof_leaves_no_pool_and_answers_eager(device, make_runner, where):
    """Issue 26 (3): an OOM right after a capture (the proof's eager run needs a forward's
    activations beside the new pool) or inside it: the call still gets its eager output, no entry
    and no pool is left, and the shape is captured at the next warm-up."""
    runner = make_runner(warmup_runs=1)
    # calls: 1 warm-up run, 2 the capture, 3 the proof's eager run (on CPU the stand-in records it)
    fn, calls = _raising_on_call(3 if where == "proof" else 2, torch.OutOfMemoryError("CUDA out of memory (test)"))
    x = torch.arange(4.0, device=device)
    with torch.inference_mode():
        out = runner(fn, (x,), capture_first_call=True)
        assert torch.equal(out, x * 2 + 1)
        assert not runner.entries() and not runner.table.pools, runner.table.pools
        assert "out of memory" in next(iter(runner.stats.eager))
        runner.begin_warmup()
        assert runner.capture(fn, (x,)).status is CaptureStatus.CAPTURED
        assert torch.equal(runner(fn, (x + 1,)), (x + 1) * 2 + 1) and runner.stats.hits == 1


def test_cancel_during_the_proof_leaves_no_pool_nothing_blocked_and_the_shape_retries(device, make_runner):
    """Issue 26 (4): a Cancel inside the proof propagates (ComfyUI expects it) after the unproven
    graph and its pool are gone; the key is not blocked, and the next capture of the shape works."""
    runner = make_runner(warmup_runs=1)
    runner.abort_errors = (_Cancelled,)
    fn, _ = _raising_on_call(3, _Cancelled())
    x = torch.arange(4.0, device=device)
    with torch.inference_mode():
        with pytest.raises(_Cancelled):
            runner.capture(fn, (x,))
        assert not runner.entries() and not runner.table.pools and not runner.blocked()
        assert runner.capture(fn, (x,)).status is CaptureStatus.CAPTURED
        assert torch.equal(runner(fn, (x + 1,)), (x + 1) * 2 + 1)


def test_replay_failure_drops_the_entry_and_reruns_eager(device, make_runner):
    state = {"calls": 0}

    def flaky(h):
        state["calls"] += 1
        # new shape after 2 warm-up runs, the capture, and the proof (one eager run, one replay)
        return h * 2 if state["calls"] <= 5 else h[:1] * 2

    def fn(x):
        return graph_break(flaky, x + 1) - 1

    runner = make_runner()
    with torch.inference_mode():
        assert runner.capture(fn, (torch.ones(2, 4, device=device),)).ok
        x = torch.randn(2, 4, device=device)
        out = runner(fn, (x,))
        assert torch.equal(out, (x[:1] + 1) * 2 - 1)  # eager rerun of the same call
        assert not runner.entries()
        [reason] = runner.stats.eager
        assert reason.startswith("replay failed: ReplayDivergence")
        runner(fn, (x,))
        assert runner.stats.eager[reason] == 2


def test_entry_limit_segment_limit_and_memory_budget_stop_capturing(device, make_runner):
    model = model_on(device, n_blocks=3)
    with torch.inference_mode():
        runner = make_runner(max_entries=1)
        assert runner.capture(model, inputs(device, n_img=16)).ok
        skipped = runner.capture(model, inputs(device, n_img=8))
        assert skipped.status is CaptureStatus.SKIPPED and "entry limit" in skipped.reason

        runner = make_runner(max_segments=2)
        failed = runner.capture(model, inputs(device))
        assert failed.status is CaptureStatus.FAILED and "more than 2 segments" in failed.reason
        args = inputs(device, seed=9)
        assert torch.equal(runner(model, args), model(*args))

        runner = make_runner(memory_budget_bytes=1)
        assert runner.capture(model, inputs(device, n_img=16)).ok  # under budget when it started
        over = runner.capture(model, inputs(device, n_img=8))
        assert over.status is CaptureStatus.SKIPPED and "memory budget" in over.reason
        args = inputs(device, n_img=16, seed=4)
        assert torch.equal(runner(model, args), model(*args))
        assert runner.stats.hits == 1


def test_keys_constants_opaque_arguments_and_unkeyable_objects(device, make_runner):
    def fn(x, scale, options=None):
        return x * scale + (options or {}).get("shift", 0)

    runner = make_runner()
    x = torch.ones(3, device=device)
    with torch.inference_mode():
        runner.capture(fn, (x, 2.0))
        assert torch.equal(runner(fn, (x, 2.0)), x * 2)
        assert torch.equal(runner(fn, (x, 3.0), label="scale 3"), x * 3)  # constants are keyed by value
        assert runner.stats.eager == {"not captured: scale 3": 1}

        opts = {"shift": 1.0, "sigmas": torch.ones(2, device=device)}  # opaque: its tensors are not inputs
        runner.capture(fn, (x, 2.0), {"options": opts}, opaque=("options",), key_extra=("shift", 1.0))
        assert torch.equal(
            runner(fn, (x, 2.0), {"options": {"shift": 1.0}}, opaque=("options",), key_extra=("shift", 1.0)), x * 2 + 1
        )
        runner(
            fn, (x, 2.0), {"options": {"shift": 5.0}}, opaque=("options",), key_extra=("shift", 5.0), label="shift 5"
        )
        assert runner.stats.eager["not captured: shift 5"] == 1

        out = runner(fn, (x, 2.0), {"options": {"hook": object()}})
        assert torch.equal(out, x * 2)
        assert runner.stats.eager["unkeyable argument args[1]['options']['hook']"] == 1


def test_disabled_runner_runs_eager_with_the_reason(device, make_runner):
    model = model_on(device, n_blocks=1)
    runner = make_runner()
    with torch.inference_mode():
        runner.capture(model, inputs(device))
        runner.disable("lowvram: weights stream every forward")
        args = inputs(device, seed=3)
        assert torch.equal(runner(model, args), model(*args))
        assert runner.capture(model, inputs(device, n_img=4)).status is CaptureStatus.SKIPPED
        runner.enable()
        runner(model, args)
    assert runner.stats.eager == {"disabled: lowvram: weights stream every forward": 1}
    assert runner.stats.hits == 1


def test_reset_drops_entries_and_blocks(device, make_runner):
    model = model_on(device, n_blocks=1)
    runner = make_runner()
    with torch.inference_mode():
        runner.capture(model, inputs(device))
        runner.reset()
        assert not runner.entries() and runner.memory_bytes == 0
        runner(model, inputs(device))
        assert runner.capture(model, inputs(device)).status is CaptureStatus.CAPTURED
        runner(model, inputs(device))
    assert runner.stats.hits == 1 and sum(runner.stats.eager.values()) == 1
