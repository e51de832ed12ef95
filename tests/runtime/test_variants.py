"""Calls that share a key through a rewrite (a model's own prologue run before the key), run on
the CPU stand-in (unit layer) and on real CUDA graphs (gpu layer).

The model here embeds its caption and pads it to a multiple of 4 with a learned pad row, as
Z-Image's NextDiT does to a multiple of 32; after the padding nothing depends on the real length.
The caller runs the embed-and-pad eagerly and keys the rest by the padded length, with the real
length as the variant: an entry serves a length other than its capture's only after one replay of
another length equalled the plain forward."""

import pytest
import torch

from bcg_runtime.core import Action, Dispatch, Gate, Pending
from bcg_runtime.core.dispatch import Reference

MULTIPLE = 4


class PaddingModel(torch.nn.Module):
    def __init__(self, dim: int = 16, leak_length: bool = False):
        super().__init__()
        torch.manual_seed(0)
        self.embed = torch.nn.Linear(8, dim)
        self.pad = torch.nn.Parameter(torch.randn(1, dim))
        self.mix = torch.nn.Linear(dim, dim)
        self.out = torch.nn.Linear(dim, dim)
        #: The real length reaches the rest of the forward (a model the rewrite is wrong for).
        self.leak_length = leak_length
        self.real_length = 0

    def embed_and_pad(self, caption: torch.Tensor) -> torch.Tensor:
        self.real_length = caption.shape[1]
        embedded = self.embed(caption)
        extra = (-embedded.shape[1]) % MULTIPLE
        return torch.cat([embedded, self.pad.repeat(embedded.shape[0], extra, 1)], dim=1)

    def rest(self, x: torch.Tensor, embedded: torch.Tensor) -> torch.Tensor:
        h = torch.cat([embedded, x], dim=1)
        h = h + torch.softmax(self.mix(h) @ h.transpose(1, 2), dim=-1) @ h
        if self.leak_length:
            h = h * self.real_length  # a Python value of the real length: frozen into the graph
        return self.out(h[:, embedded.shape[1] :])

    def forward(self, x: torch.Tensor, caption: torch.Tensor) -> torch.Tensor:
        return self.rest(x, self.embed_and_pad(caption))


def caption(device, length: int, seed: int):
    return torch.randn(2, length, 8, generator=torch.Generator().manual_seed(seed)).to(device)


def run(runner, model, x, text):
    """What the DIFFUSION_MODEL hook does for a bucketed call: prologue, key, decision, execute."""
    with torch.no_grad():
        embedded = model.embed_and_pad(text)
        dispatch = Dispatch(label=f"txt{embedded.shape[1]}", variant=text.shape[1])
        found = runner.lookup((), {"x": x, "embedded": embedded}, dispatch, Gate(on_first_call=True))
        decision = runner.resolve(found, None) if isinstance(found, Pending) else found
        reference = Reference(model, (), {"x": x, "caption": text})
        out = runner.execute(decision, model.rest, (), {"x": x, "embedded": embedded}, reference=reference)
        return decision.action, out


@pytest.fixture
def x(device):
    return torch.randn(2, 6, 16, generator=torch.Generator().manual_seed(1)).to(device)


def test_lengths_of_one_bucket_share_one_graph_after_a_proof(make_runner, device, x):
    model = PaddingModel().to(device)
    runner = make_runner()
    first = caption(device, 5, 0)
    action, out = run(runner, model, x, first)
    assert action is Action.CAPTURE and torch.equal(out, model(x, first))
    assert len(runner.table.entries) == 1

    # Another real length of the bucket (6 -> 8): proven against the plain forward, then shared.
    other = caption(device, 6, 1)
    action, out = run(runner, model, x, other)
    assert action is Action.PROVE and torch.equal(out, model(x, other))
    assert runner.stats.hits == 1
    for length, seed in ((7, 2), (8, 3), (5, 4)):
        text = caption(device, length, seed)
        action, out = run(runner, model, x, text)
        assert action is Action.SERVE and torch.equal(out, model(x, text)), length
    assert len(runner.table.entries) == 1 and runner.stats.hits == 4

    # A length of the next bucket (9 -> 12) does not share it: its own key, its own capture.
    action, out = run(runner, model, x, caption(device, 9, 5))
    assert action is Action.CAPTURE and len(runner.table.entries) == 2


def test_the_captured_length_serves_before_the_bucket_is_proven(make_runner, device, x):
    model = PaddingModel().to(device)
    runner = make_runner()
    run(runner, model, x, caption(device, 5, 0))
    text = caption(device, 5, 7)
    action, out = run(runner, model, x, text)
    assert action is Action.SERVE and torch.equal(out, model(x, text))
    assert not next(iter(runner.table.entries.values())).shared


def test_a_rewrite_that_is_not_exact_fails_its_proof_and_answers_eager(make_runner, device, x):
    model = PaddingModel(leak_length=True).to(device)
    runner = make_runner()
    action, out = run(runner, model, x, caption(device, 5, 0))
    assert action is Action.CAPTURE and len(runner.table.entries) == 1

    other = caption(device, 6, 1)
    action, out = run(runner, model, x, other)
    assert action is Action.PROVE and torch.equal(out, model(x, other))  # the plain forward's answer
    assert not runner.table.entries and runner.stats.hits == 0
    (reason,) = runner.table.blocked.values()
    assert str(reason).startswith("replay not exact"), reason
    action, out = run(runner, model, x, caption(device, 7, 2))
    assert action is Action.EAGER and torch.equal(out, model(x, caption(device, 7, 2)))


def test_eager_answers_come_from_the_plain_call(make_runner, device, x):
    """Where the runner says eager (here: capturing is off), the call runs as received, never the
    rewritten form."""
    model = PaddingModel().to(device)
    runner = make_runner()
    runner.disable("test")
    calls = []
    model.register_forward_pre_hook(lambda module, args: calls.append("plain"))
    action, out = run(runner, model, x, caption(device, 5, 0))
    assert action is Action.EAGER and calls == ["plain"]
