"""Z-Image's exact text buckets, inside real ComfyUI (depth-1 Z-Image, CPU stand-in; the gpu
suite runs the same on CUDA graphs).

The source audit behind the rule (``bcg_runtime/comfy/models/zimage.py``): in the host's
``comfy/ldm/lumina/model.py`` the DiT reads its ``context`` only as ``cap_feats``, embeds it with
``cap_embedder`` and pads it to a multiple of ``pad_tokens_multiple`` with ``cap_pad_token``
(0.33.0: ``embed_cap`` through ``pad_zimage``; 0.8.0: inline in ``patchify_and_embed``); RoPE
positions, masks and ``l_effective_cap_len`` then follow the padded length, and ``num_tokens``
is passed along unread. The tests below prove it the way the pack does at run time: by
``torch.equal`` against the stock forward for lengths the graph was not captured for.
"""

import gc
import inspect
import re

import pytest
import torch
from bcg_testing import session_of

pytestmark = pytest.mark.comfy
FAMILY = "zimage"
FIRST = "first call, captured"


def sample(model, length, seed, cfg=1.0, negative_length=None):
    from bench import synthetic

    positive = synthetic.make_conditioning(FAMILY, length, seed=seed)
    negative = synthetic.make_conditioning(FAMILY, negative_length or length, seed=seed + 100)
    return synthetic.sample(model, FAMILY, 64, 64, 3, cfg, positive, negative, seed=seed)


def both(bcg_model, model, length, seed, **kwargs):
    out = sample(bcg_model, length, seed, **kwargs)
    assert torch.equal(out, sample(model, length, seed, **kwargs)), (length, seed)
    return session_of(bcg_model).last_run


def test_the_host_pads_captions_itself_and_reads_the_real_length_nowhere_else():
    from comfy.ldm.lumina import model as lumina

    body = inspect.getsource(lumina.NextDiT)
    forward = inspect.getsource(lumina.NextDiT._forward)
    reads = [line.strip() for line in forward.splitlines() if re.search(r"\bcontext\b", line)]
    assert len(reads) == 2 and reads[1] == "cap_feats = context", reads  # the signature, then this
    assert len(re.findall(r"self\.cap_embedder\(", body)) == 1, "the caption is embedded in more than one place"
    assert "pad_tokens_multiple" in body and "cap_pad_token" in body
    passing = re.compile(r"^\s*(def |self, |\)\.execute\(|.*= self\.patchify_and_embed\()")
    uses = [
        line.strip() for line in body.splitlines() if re.search(r"\bnum_tokens\b", line) and not passing.match(line)
    ]
    assert not uses, f"num_tokens is read: {uses}"


def test_lengths_of_one_bucket_replay_one_graph_and_other_buckets_do_not(pack, model, standin_graphs):
    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)

    run = both(bcg_model, model, 40, 1)  # captured at 40 tokens: bucket 33-64
    assert run["replayed"] == 2 and run["eager"] == {f"{FIRST}: 64x64 txt33-64 b1": 1}, run
    run = both(bcg_model, model, 50, 2)  # another length of the bucket: proven on its first call, then shared
    assert run["replayed"] == 3 and not run["eager"], run
    run = both(bcg_model, model, 64, 3)
    assert run["replayed"] == 3 and session.runner.stats.captures == 1, run
    (entry,) = session.runner.table.entries.values()
    assert entry.shared and entry.variant == 40

    run = both(bcg_model, model, 65, 4)  # 65-96: its own graph
    assert run["eager"] == {f"{FIRST}: 64x64 txt65-96 b1": 1} and session.runner.stats.captures == 2, run
    run = both(bcg_model, model, 17, 5, cfg=2.0, negative_length=90)  # cond 1-32 (new), uncond 65-96
    assert run["calls"] == 6 and run["eager"] == {f"{FIRST}: 64x64 txt1-32 b1": 1}, run
    assert run["replayed"] == 5 and session.runner.stats.captures == 3, run


def test_a_caption_mask_keeps_the_exact_length(pack, model, standin_graphs):
    """A caption mask holding zeros reaches the DiT (0.8.0's context refiner reads it): such a
    call is keyed by its exact length, as before buckets. (64 tokens: 0.8.0's own forward fails
    for a masked caption it has to pad.)"""
    from bench import synthetic

    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    positive = synthetic.make_conditioning(FAMILY, 64, seed=1)
    mask = torch.ones(1, 64, dtype=torch.long)
    mask[:, 50:] = 0
    positive = [[c, {**extras, "attention_mask": mask}] for c, extras in positive]
    out = synthetic.sample(bcg_model, FAMILY, 64, 64, 2, 1.0, positive, positive, seed=1)
    assert torch.equal(out, synthetic.sample(model, FAMILY, 64, 64, 2, 1.0, positive, positive, seed=1))
    eager = session_of(bcg_model).last_run["eager"]
    assert eager == {f"{FIRST}: 64x64 txt64 b1": 1}, eager


def test_the_batch_benchmark_times_bookkeeping_apart_from_the_forward(pack, model, standin_graphs, monkeypatch):
    """``bench.bookkeeping.hook_times``: a call answered eagerly gives one bookkeeping sample (the
    hook's time beyond the DiT's forward), a replay one replay sample, a capture neither."""
    from bench.bookkeeping import hook_times

    collecting_callbacks = len(gc.callbacks)
    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    with hook_times(bcg_model) as times:
        sample(bcg_model, 40, 1)  # 3 calls: captured on the first, then 2 replays
        sample(model, 40, 1)  # no BCG: not timed
    summary = times.summary()
    assert (summary["capture_calls"], summary["replayed_calls"], summary["eager_calls"]) == (1, 2, 0), summary
    (cold,) = pack[1]["BCGApply"].execute(model, "auto", capture="warm-up only").args
    with hook_times(cold) as times:
        sample(cold, 40, 1)
    assert times.summary()["eager_calls"] == 3 and all(0 < s < 0.05 for s in times.eager_overhead), times
    assert len(times.eager_reason) == 3 and all(r.startswith("not captured") for r in times.eager_reason), times
    assert "record_eager" not in vars(session_of(cold).runner.stats)  # the runner's own counting again
    assert "_forward" not in vars(model.get_model_object("diffusion_model"))
    # a garbage collection during the bookkeeping (here: while the adapter checks the call) is counted apart
    adapter = session_of(cold).adapter
    refusal = adapter.refusal
    monkeypatch.setattr(adapter, "refusal", lambda *a, **k: (gc.collect(), refusal(*a, **k))[1])
    with hook_times(cold) as times:
        sample(cold, 40, 1)
    assert len(times.eager_gc) == 3 and all(0 < g <= s for g, s in zip(times.eager_gc, times.eager_overhead)), times
    assert collecting_callbacks == len(gc.callbacks)


def test_the_batch_benchmark_splits_a_job_into_load_dit_calls_and_the_rest(pack, model):
    """``bench.bookkeeping.sampling_split``: the DiT calls of the plain model and of BCG Apply's
    clone are both counted (they share one ``BaseModel``), ComfyUI's model load is timed, and the
    patches are gone afterwards."""
    import comfy.model_management as mm

    from bench.bookkeeping import sampling_split

    plain_load = mm.load_models_gpu
    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto", capture="warm-up only").args
    with sampling_split(model) as split:
        sample(model, 40, 1)
        plain = split.take()
        sample(bcg_model, 40, 1)
        bcg = split.take()
    for load, dit, calls in (plain, bcg):
        assert calls == 3 and 0 < load and 0 < dit, (plain, bcg)
    assert split.take() == (0.0, 0.0, 0)
    assert mm.load_models_gpu is plain_load and "apply_model" not in vars(model.model)


def test_an_input_the_rule_was_not_read_for_keeps_the_exact_length(pack, model, standin_graphs):
    """An input the DiT call carries that the rule's source reading did not cover (here
    ``direct_context``, which a newer ``embed_cap`` joins to the caption before padding, passed by
    ComfyUI's own unet function wrapper; 0.33.0's ``_forward`` takes it in ``**kwargs``) turns the
    bucket off: the call is keyed by its exact length."""
    from bench import synthetic

    def with_direct_context(apply_model, args):
        c = dict(args["c"])
        c["direct_context"] = torch.zeros(1, 4, 8)
        return apply_model(args["input"], args["timestep"], **c)

    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    bcg_model = bcg_model.clone()
    bcg_model.set_model_unet_function_wrapper(with_direct_context)
    plain = model.clone()
    plain.set_model_unet_function_wrapper(with_direct_context)
    positive = synthetic.make_conditioning(FAMILY, 40, seed=1)
    out = synthetic.sample(bcg_model, FAMILY, 64, 64, 2, 1.0, positive, positive, seed=1)
    assert torch.equal(out, synthetic.sample(plain, FAMILY, 64, 64, 2, 1.0, positive, positive, seed=1))
    eager = session_of(bcg_model).last_run["eager"]
    assert eager == {f"{FIRST}: 64x64 txt40 b1": 1}, eager


def test_an_eager_call_never_runs_the_caption_embedding_twice(pack, model, standin_graphs):
    """Once a caption's embedding shape is known, a call is keyed by that shape and the model's
    embedding runs only for a capture or a replay: a call answered eagerly embeds its caption once,
    in the stock forward (the bookkeeping ``bench.batch`` measures per eager call)."""
    dm = model.get_model_object("diffusion_model")
    embedded = []
    handle = dm.cap_embedder.register_forward_hook(lambda *_: embedded.append(1))
    try:
        (cold,) = pack[1]["BCGApply"].execute(model, "auto", capture="warm-up only").args
        sample(cold, 40, 1)  # 3 DiT calls, all eager (nothing warmed)
        embedded.clear()
        sample(cold, 50, 2)
        assert session_of(cold).last_run["eager"] and len(embedded) == 3, embedded
    finally:
        handle.remove()


def test_a_caption_embedding_of_another_shape_than_its_key_never_replays(pack, model, standin_graphs):
    """The key of a caption call is the shape its embedding had before; should the embedding come
    out otherwise, the call runs eager with the reason instead of replaying over other inputs."""
    from bcg_runtime.comfy.models import zimage

    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    both(bcg_model, model, 40, 1)  # captured: bucket 33-64
    seen = zimage._EMBEDDINGS[model.get_model_object("diffusion_model")]
    ((facts, (width, dtype)),) = seen.items()
    seen[facts] = (width + 8, dtype)  # a stale prediction
    run = both(bcg_model, model, 50, 2)
    (reason,) = [r for r in run["eager"] if "another shape" in r]
    assert run["eager"][reason] == 1 and run["replayed"] == 2, run  # that call only, then the right key again


@pytest.mark.capture_costs
def test_a_run_keys_each_call_signature_once_and_the_gate_still_weighs_every_call(
    pack, model, standin_graphs, monkeypatch
):
    """A signature met before in the run is decided on the key it was given then (issue #54: the
    bookkeeping of a call put off by the capture gate): its caption is not padded again, the gate
    still counts and weighs every call, the reasons are the same, and a later run keys anew."""
    from bcg_runtime.core.dispatch import NOT_WORTH_IT
    from bcg_runtime.core.stats import ProofTimes

    (bcg_model,) = pack[1]["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    costs = session.runner.stats.costs
    for size in range(64):  # measured: a capture costs 10 s and a replay saves nothing, at every size
        costs.record(10.0, ProofTimes(eager=0.01, host=0.001, replay=0.001), size)
    padded = []
    adapter = session.adapter
    plain_padded_text = adapter.padded_text
    monkeypatch.setattr(
        adapter,
        "padded_text",
        lambda dit, call: (padded.append(call["context"].shape[1]), plain_padded_text(dit, call))[1],
    )
    run = both(bcg_model, model, 40, 1)  # 3 calls of one signature
    assert run["eager"] == {str(NOT_WORTH_IT): 3} and padded == [40], (run, padded)
    ((key, (calls_left, runs)),) = session.runner.gate.deferred.items()
    assert (calls_left, runs) == (0, 1)  # the gate weighed the third call too
    run = both(bcg_model, model, 40, 2, cfg=2.0, negative_length=70)  # 6 calls, two signatures
    assert run["eager"] == {str(NOT_WORTH_IT): 6} and padded == [40, 40, 70], (run, padded)
    assert session.runner.gate.deferred[key] == (0, 2)  # a new run, told by the count growing
    costs.savings.clear()  # no saving measured: a capture always repays again
    run = both(bcg_model, model, 40, 3)
    assert run["replayed"] == 2 and session.runner.stats.captures == 1, run


@pytest.mark.parametrize("mode,lengths", [("auto", [1, 16, 33, 48]), ("fast", [16, 48])])
def test_the_warmup_proves_a_bucket_at_a_second_length_only_where_it_buckets(pack, model, mode, lengths):
    """BCG Warmup Capture's plan: in the exact modes each bucket is captured at one length and proven
    at another; mode fast keys the exact length (no padded caption), so it plans each length once."""
    from bcg_runtime.comfy.warmup import plan_jobs
    from bcg_runtime.plan import WarmupPlan

    (bcg_model,) = pack[1]["BCGApply"].execute(model, mode).args
    jobs, notes = plan_jobs(session_of(bcg_model), WarmupPlan([(64, 64, None)], [16, 48], [1]))
    assert sorted(int(job.what.split()[1].rstrip(",")) for job in jobs) == lengths, [job.what for job in jobs]
    assert len([n for n in notes if "one graph for every caption length" in n]) == (2 if mode == "auto" else 0), notes
