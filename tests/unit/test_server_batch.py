"""bench.server_batch's job and report: bench.batch's length draw and size rotation, totals from
the jobs, and a CPU smoke test that prints no speed-up."""

import pytest

from bench import server_batch
from bench.batch import prompt_lengths

pytestmark = pytest.mark.unit


def test_the_job_is_the_batch_benchmarks_draw_with_sizes_rotated():
    args = server_batch.parse_args(["--prompts", "7", "--sizes", "512x512,768x512", "--seed", "3"])
    jobs = server_batch.jobs_of(args)
    assert [j["tokens"] for j in jobs] == prompt_lengths(7, 3)
    assert [j["size"] for j in jobs] == [(512, 512), (768, 512)] * 3 + [(512, 512)]
    assert [j["seed"] for j in jobs] == [30000 + i for i in range(7)]
    smoke = server_batch.parse_args(["--cpu"])
    assert (smoke.prompts, smoke.depth, smoke.steps, smoke.size_list) == (3, 1, 2, [(64, 64)])


def test_bad_model_is_one_error_naming_the_field(capsys):
    with pytest.raises(SystemExit):
        server_batch.parse_args(["--model", "zimage:int4"])
    assert "--model: 'zimage:int4' is not FAMILY[:WEIGHTS]" in capsys.readouterr().err


def _record(cpu: bool) -> dict:
    jobs = [
        {"tokens": 40, "eager": {"wall_s": 2.0}, "bcg": {"wall_s": 4.0, "calls": 8, "replayed": 0}, "bit_equal": True},
        {"tokens": 50, "eager": {"wall_s": 2.0}, "bcg": {"wall_s": 1.0, "calls": 8, "replayed": 8}, "bit_equal": True},
        {"tokens": 50, "eager": {"wall_s": 2.0}, "bcg": {"wall_s": 1.0, "calls": 8, "replayed": 8}, "bit_equal": False},
        # the first eager run was the odd one: run again, eager equals BCG's latent and not itself
        {"tokens": 60, "eager": {"wall_s": 2.0}, "bcg": {"wall_s": 1.0, "calls": 8, "replayed": 8}, "bit_equal": False,
         "eager_again_equal": False, "bit_equal_to_eager_again": True},
    ]  # fmt: skip
    env = {
        "model": "zimage",
        "comfyui": "0.33.0",
        "cpu_smoke": cpu,
        "steps": 8,
        "cfg": 1.0,
        "sizes": "512x512",
        "device": "H100",
    }
    return {"env": env, "summary": server_batch.summarize(jobs)}


def test_totals_and_the_report():
    record = _record(cpu=False)
    s = record["summary"]
    assert (s["eager_s"], s["bcg_s"], s["speedup"], s["distinct_lengths"]) == (8.0, 7.0, 1.143, 3)
    # without each pass's first prompt (the model's load, BCG's first capture)
    assert (s["eager_rest_s"], s["bcg_rest_s"], s["speedup_rest"]) == (6.0, 3.0, 2.0)
    assert (s["first_eager_s"], s["first_bcg_s"]) == (2.0, 4.0)
    assert (s["replayed"], s["dit_calls"], s["bit_equal"], s["exact"], s["eager_not_reproduced"]) == (24, 32, 2, 3, 1)
    text = server_batch.format_summary(record)
    assert "1.143x end to end" in text and "BCG 3.0 s, 2.0x;" in text
    assert "replayed 24/32 DiT calls; bit-equal 2/4 (3 counting the 1 whose first eager run" in text
    assert "eager again after" not in text and "eager_after_s" not in s  # no pass after BCG's
    smoke = server_batch.format_summary(_record(cpu=True))
    assert smoke.startswith("smoke test, not a benchmark") and "x end to end" not in smoke and "eager 8.0" not in smoke


def test_a_latent_is_exact_when_equal_or_when_its_eager_twin_was_the_odd_one():
    assert server_batch.exact({"bit_equal": True})
    assert not server_batch.exact({"bit_equal": False})
    # the repeat equals the first eager run: BCG differed from a reproducible eager
    assert not server_batch.exact({"bit_equal": False, "eager_again_equal": True, "bit_equal_to_eager_again": False})
    assert not server_batch.exact({"bit_equal": False, "eager_again_equal": False, "bit_equal_to_eager_again": False})
    assert server_batch.exact({"bit_equal": False, "eager_again_equal": False, "bit_equal_to_eager_again": True})


def test_an_eager_pass_after_bcgs_is_timed_beside_the_first():
    """Eager runs before and after BCG's pass (the default): the first eager pass may pay what a
    later one does not, so both are reported."""
    assert server_batch.parse_args([]).eager_after and not server_batch.parse_args(["--no-eager-after"]).eager_after
    record = _record(cpu=False)
    jobs = [
        {"tokens": 40, "eager": {"wall_s": 3.0}, "bcg": {"wall_s": 2.0}, "eager_after": {"wall_s": 2.5}, "bit_equal": True},
        {"tokens": 50, "eager": {"wall_s": 2.0}, "bcg": {"wall_s": 1.0}, "eager_after": {"wall_s": 1.5}, "bit_equal": True},
        {"tokens": 50, "eager": {"wall_s": 2.0}, "bcg": {"wall_s": 1.0}, "eager_after": {"wall_s": 1.6}, "bit_equal": True},
    ]  # fmt: skip
    record["summary"] = s = server_batch.summarize(jobs)
    assert (s["eager_after_s"], s["eager_after_rest_s"], s["speedup_after"], s["median_eager_after_s"]) == (
        5.6, 3.1, 1.4, 1.6,
    )  # fmt: skip
    assert "; eager again after BCG's pass 5.6 s (1.4x; without its first prompt 3.1 s, per prompt median 1.6 s);" in (
        server_batch.format_summary(record)
    )
