"""``bench.server --profile``: the request file, the profiling wrapper around a sampling call, its
summary and the report's table (the wrapper inside a real server: tests/e2e/test_server_bench.py)."""

import json

import torch

from bench import server_profile, server_report


def work(n=3):
    x = torch.ones(64, 64)
    for _ in range(n):
        x = x @ x / 64
    return x


def test_a_request_profiles_one_sampling_and_is_taken(tmp_path):
    calls = []
    sample = server_profile.profiled(lambda: calls.append(1) or work(), tmp_path)
    sample()
    assert calls == [1] and not list(tmp_path.iterdir())  # no request: runs as it is, writes nothing
    out = tmp_path / "profile.json"
    server_profile.request(tmp_path, out)
    assert torch.equal(sample(), work())
    assert not (tmp_path / server_profile.REQUEST).exists()  # taken: the next sampling is not profiled
    profile = json.loads(out.read_text())
    assert profile["wall_s"] > 0 and profile["aten_calls"] >= 3, profile
    assert set(profile["runtime_calls"]) == set(server_profile.RUNTIME_CALLS)
    if not torch.cuda.is_available():
        assert profile["kernel_s"] == 0 and profile["busy"] == 0 and profile["top"] == [], profile
    out.unlink()
    sample()
    assert not out.exists()


def test_the_report_has_a_row_per_profiled_variant_and_says_when_none_came_back():
    profile = {
        "wall_s": 8.0, "kernel_s": 6.0, "busy": 0.75, "split": {"gemm": 4.0, "attention": 1.5, "other": 0.5},
        "top": [{"name": "sm90_xmma_gemm_e4m3", "kind": "gemm", "calls": 250, "seconds": 3.2}],
        "runtime_calls": dict.fromkeys(server_profile.RUNTIME_CALLS, 0) | {"cudaMalloc": 3, "cudaStreamSynchronize": 60},
        "aten_calls": 120000,
    }  # fmt: skip
    job = {"family": "minimax_h3", "weights": "fp8_scaled", "depth": None, "prompts": [], "summaries": [],
           "profiles": [{"size": "768x512x5", "variant": "eager", **profile},
                        {"size": "768x512x5", "variant": "bcg", "error": "no profile came back"}]}  # fmt: skip
    table = server_report.format_profiles([job])
    eager_row, error_row = table.splitlines()[2:]
    assert "| eager | 8.000 | 6.000 | 0.75 | gemm 4.00, attention 1.50, other 0.50 |" in eager_row, eager_row
    assert "sm90_xmma_gemm_e4m3 3.20 s x250 | 3 / 0 / 60 | 120000 |" in eager_row, eager_row
    assert "| bcg | no profile came back |" in error_row
    report = server_report.format_report({}, [job])
    assert server_report.PROFILE_TITLE in report and eager_row in report
    assert server_report.format_profiles([{**job, "profiles": []}]) == ""
