"""The batch benchmark's prompt-length draw: seeded, within bounds, and spread like real prompts."""

import statistics

import pytest

from bench.batch import prompt_lengths

pytestmark = pytest.mark.unit


def test_prompt_lengths_are_seeded_bounded_and_spread():
    lengths = prompt_lengths(100, seed=0)
    assert lengths == prompt_lengths(100, seed=0) and lengths != prompt_lengths(100, seed=1)
    assert len(lengths) == 100 and min(lengths) >= 10 and max(lengths) <= 200
    # a realistic spread: many distinct lengths, short and long prompts both present
    assert len(set(lengths)) >= 50
    assert min(lengths) < 30 and max(lengths) > 120
    assert 40 <= statistics.median(lengths) <= 90


def test_the_summary_says_when_bcgs_host_time_could_not_be_measured():
    from bench.batch import Job, format_summary
    from bench.bookkeeping import HookTimes

    base = {
        "family": "sd3", "depth": 1, "steps": 2, "cfg": 1.0, "sizes": "64x64", "gpu": "H100", "torch": "2.11",
        "comfyui": "0.33.0", "jobs": 1, "prompts": 1, "seeds": 1, "token_range": [10, 10], "distinct_lengths": 1,
        "replayed": 1, "dit_calls": 2, "replayed_share": 0.5, "eager_s": 1.0, "bcg_s": 0.5, "speedup": 2.0,
        "captures": 1, "mean_capture_s": 0.1, "mean_eager_call_s": 0.01, "evictions": 0, "memory_budget_mib": 0,
        "peak_graph_mib": 1.0, "exact": 1, "left_eager_jobs": 0,
    }  # fmt: skip
    jobs = [Job(0, 64, 64, 10, 0)]
    timed = HookTimes(
        eager_overhead=[0.0002, 0.0004], replay=[0.001], eager_gc=[0.0, 0.0002], eager_reason=["not captured", "served"]
    )
    text = format_summary(jobs, {**base, **timed.summary()})
    assert "0.3 ms mean (0.3 median, 0.2 p99, 0.1 ms mean of garbage collection) per eager call (2);" in text
    assert "\n    0.4 ms (0.2 gc): served\n    0.2 ms (0.0 gc): not captured\n" in text, text
    assert "1.0 ms median per replay" in text and "jobs BCG left eager: 0\n" in text
    assert "speedup 2.00x; no ceiling (a size has no job that replayed whole)\n" in text
    split = {"left_eager_jobs": 3, "left_eager_capturing_jobs": 1, "left_eager_extra_ms": 30.0,
             "left_eager_extra_load_ms": 2.0, "left_eager_extra_dit_ms": 2.0, "left_eager_extra_rest_ms": 26.0,
             "left_eager_plain_extra_ms": 25.0}  # fmt: skip
    assert (
        "3 (1 captured a graph), BCG minus eager per job (median ms): 30.0 in all, 2.0 model load, 2.0 DiT calls, "
        "26.0 the rest; 25.0 in the jobs that captured nothing"
    ) in format_summary(jobs, {**base, **timed.summary(), **split})
    untimed = HookTimes(measured=False)
    assert "BCG's host time beyond the forward: not measured" in format_summary(jobs, {**base, **untimed.summary()})


def _part(indexes, eager_s, bcg_s, exact=True, **summary):
    same = {"family": "qwen_image", "depth": "full", "steps": 20, "cfg": 2.5, "sizes": "512x512", "prompts": 4,
            "seeds": 1, "gpu": "H100", "torch": "2.11", "comfyui": "0.33.0", "captures": len(indexes)}  # fmt: skip
    from dataclasses import asdict

    from bench.batch import Job

    jobs = [  # as --json writes them
        asdict(Job(i, 512, 512, 40, i, eager_s=eager_s, bcg_s=bcg_s, calls=40, replayed=39 + (i == 0), exact=exact))
        for i in indexes
    ]
    return {"summary": {**same, **summary}, "jobs": jobs}


def test_a_batch_run_in_parts_adds_up_to_the_whole():
    from bench.batch import format_merged, merge, parse_args

    assert parse_args(["--jobs", "50-100"]).jobs == (50, 100)
    for bad in ("50", "5-2", "a-b"):
        with pytest.raises(SystemExit):
            parse_args(["--jobs", bad])
    merged = merge([_part([0, 1], eager_s=6.0, bcg_s=3.0), _part([2, 3], eager_s=4.0, bcg_s=4.0, exact=False)])
    assert (merged["jobs"], merged["of_jobs"], merged["parts"]) == (4, 4, 2)
    assert (merged["eager_s"], merged["bcg_s"], merged["speedup"]) == (20.0, 14.0, round(20 / 14, 3))
    assert (merged["replayed"], merged["dit_calls"], merged["captures"], merged["exact"]) == (157, 160, 4, 2)
    assert merged["replay_ceiling"] == round(20 / (4 * 3.0), 3)  # job 0 replayed whole in 3.0 s
    assert "were every job replayed whole 1.67x (per size" in format_merged(merged)
    assert "4 of 4 jobs in 2 parts" in format_merged(merged) and "bit-equal to eager: 2/4" in format_merged(merged)
    with pytest.raises(ValueError, match="overlap"):
        merge([_part([0, 1], 1.0, 1.0), _part([1, 2], 1.0, 1.0)])
    with pytest.raises(ValueError, match="steps"):
        merge([_part([0], 1.0, 1.0), _part([1], 1.0, 1.0, steps=8)])


def test_jobs_bcg_left_eager_are_told_apart_by_where_their_time_went():
    from bench.batch import Job, left_eager_split

    def job(i, replayed, bcg, eager, captures_total=0):  # (total, load, dit) seconds per side
        j = Job(i, 64, 64, 10, 0, calls=8, replayed=replayed, captures_total=captures_total)
        j.bcg_s, j.bcg_load_s, j.bcg_dit_s = bcg
        j.eager_s, j.eager_load_s, j.eager_dit_s = eager
        return j

    jobs = [
        job(0, 0, (0.520, 0.010, 0.400), (0.500, 0.010, 0.398)),
        job(1, 0, (0.530, 0.012, 0.401), (0.500, 0.010, 0.399)),
        job(2, 8, (0.100, 0.010, 0.050), (0.500, 0.010, 0.400)),  # replayed: not counted
        job(3, 0, (0.540, 0.014, 0.402), (0.500, 0.010, 0.400), captures_total=1),  # captured in this job
    ]
    split = left_eager_split(jobs)
    assert split == {
        "left_eager_jobs": 3, "left_eager_capturing_jobs": 1, "left_eager_extra_ms": 30.0,
        "left_eager_extra_load_ms": 2.0, "left_eager_extra_dit_ms": 2.0, "left_eager_extra_rest_ms": 26.0,
        "left_eager_plain_extra_ms": 25.0,
    }, split  # fmt: skip
    assert left_eager_split(jobs[2:3]) == {"left_eager_jobs": 0}


def test_capture_phases_are_medians_that_leave_the_first_capture_out():
    """The batch summary's split of a capture's cost: each phase's median over the held entries
    but the earliest (the process's first capture carries one-time initialisation)."""
    from bench.batch import capture_phases
    from bcg_runtime.core.stats import CapturePhases, EntryStats, ProofTimes

    def entry(warmup, graph, held, eager, replay):
        return EntryStats("512x512", 1, 0, warmup + graph + held, 0, 0, proof=ProofTimes(eager, eager, replay),
                          phases=CapturePhases(warmup, graph, held))  # fmt: skip

    first = entry(2.0, 2.0, 0.5, 1.0, 1.0)
    later = [entry(0.06, 0.12, 0.01, 0.067, 0.035), entry(0.08, 0.14, 0.03, 0.069, 0.037)]
    assert capture_phases([first, *later]) == {
        "warmup": 70.0, "graph": 130.0, "held": 20.0, "proof_eager": 68.0, "proof_replay": 36.0
    }  # fmt: skip
    assert capture_phases([first]) is None and capture_phases([]) is None


def test_the_replay_ceiling_prices_every_job_at_its_sizes_whole_replay():
    """Host C's batch (docs/benchmarks.md): a 512² job replayed whole took 0.282 s against eager's
    0.541, a 768x512 one 0.377 against 0.509; priced so, the batch could gain at most their blend,
    whatever the captures cost. A size with no job replayed whole gives no ceiling."""
    from bench.batch import Job, replay_ceiling

    def job(i, w, h, eager_s, bcg_s, replayed):
        return Job(i, w, h, 40, i, bcg_s=bcg_s, eager_s=eager_s, calls=8, replayed=replayed)

    jobs = [
        job(0, 512, 512, 0.541, 0.9, 0),  # captured: eager calls and a capture
        job(1, 512, 512, 0.541, 0.282, 8),
        job(2, 768, 512, 0.509, 0.377, 8),
        job(3, 768, 512, 0.509, 0.6, 7),
    ]
    out = replay_ceiling(jobs)
    assert out["replayed_jobs_s"] == {"512x512": [0.541, 0.282], "768x512": [0.509, 0.377]}
    assert out["replay_ceiling"] == round((2 * 0.541 + 2 * 0.509) / (2 * 0.282 + 2 * 0.377), 3) == 1.593
    assert replay_ceiling(jobs[:1] + jobs[2:])["replay_ceiling"] is None  # 512² never replayed whole
