"""The CPU stand-in must keep the property that makes CUDA graphs dangerous: replay reads and
writes the recorded storages, never the tensors a caller holds now."""

import pytest
import torch

from bcg_runtime.core import GraphRunner
from bcg_runtime.core.entries import Entry
from bcg_runtime.core.cpu_graph import CaptureUnsupportedError, RecordedGraph, RecordingBackend

pytestmark = pytest.mark.unit


def record(fn, *args):
    g = RecordedGraph()
    g.capture_begin()
    try:
        out = fn(*args)
    finally:
        g.capture_end()
    return g, out


def test_replay_reads_recorded_storage_not_new_tensors():
    x = torch.tensor([1.0, 2.0])
    g, out = record(lambda t: t * 2 + 1, x)
    assert out.tolist() == [3.0, 5.0]

    fresh = torch.tensor([10.0, 20.0])  # a caller's new input, never copied in
    g.replay()
    assert out.tolist() == [3.0, 5.0]

    x.copy_(fresh)  # what a runner must do: write into the recorded input
    g.replay()
    assert out.tolist() == [21.0, 41.0]


def test_replay_writes_into_recorded_intermediates_and_views():
    x = torch.arange(6.0)
    g, out = record(lambda t: (t.view(2, 3) + 1).sum(dim=1), x)
    x.mul_(2)
    g.replay()
    assert out.tolist() == [(0 + 2 + 4) + 3.0, (6 + 8 + 10) + 3.0]


def test_inplace_ops_replay_in_place():
    acc = torch.zeros(3)
    x = torch.ones(3)
    g, _ = record(lambda a, t: a.add_(t), acc, x)
    g.replay()
    g.replay()
    assert acc.tolist() == [3.0, 3.0, 3.0]


@pytest.mark.parametrize(
    "sync",
    [lambda t: t.sum().item(), lambda t: torch.nonzero(t), lambda t: bool(t.sum() > 0)],
    ids=["item", "nonzero", "bool"],
)
def test_host_syncs_are_rejected_like_a_real_capture(sync):
    with pytest.raises(CaptureUnsupportedError, match="not permitted when stream is capturing"):
        record(sync, torch.ones(3))


def test_runner_that_skips_the_input_copy_replays_stale_values(monkeypatch):
    """Guard for the stand-in itself: a broken runner cannot pass tests run on it."""
    runner = GraphRunner(backend=RecordingBackend())
    fn = lambda x: x * 3  # noqa: E731
    runner.capture(fn, (torch.ones(4),))

    good = runner(fn, (torch.full((4,), 2.0),))
    assert torch.equal(good, torch.full((4,), 6.0))

    monkeypatch.setattr(Entry, "replay", lambda entry, leaves: (entry.graph.replay(), entry.output)[1])
    stale = runner(fn, (torch.full((4,), 5.0),))
    assert not torch.equal(stale, torch.full((4,), 15.0))
    assert torch.equal(stale, torch.full((4,), 6.0))
