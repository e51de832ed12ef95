"""The fusion map's parts (bench/fusion_map.py): the bit check can say both yes and no, fp8 is
compared by its bytes, every site names a chain whose eager form runs, and a CPU map says it is a
smoke test. Inductor is not compiled here (minutes on two cores); the GPU run is the map."""

import pytest
import torch

from bench import fusion_map as fm

pytestmark = pytest.mark.unit


def _make(shape_len: int):
    def make(trial: int):
        gen = torch.Generator().manual_seed(trial)
        x = torch.randn(4, shape_len, generator=gen).to(torch.bfloat16)
        y = torch.randn(4, shape_len, generator=gen).to(torch.bfloat16)
        return x, y, torch.randn(1, shape_len, generator=gen).to(torch.bfloat16)

    return make


def test_compare_tells_an_equal_form_from_one_that_rounds_elsewhere():
    same = fm.compare(fm.gate_residual, lambda x, y, g: torch.add(x, torch.mul(y, g)), _make(64), trials=5)
    assert same == fm.Verdict(5, 5, 0.0) and same.exact

    def fp32_then_round(x, y, g):  # one rounding where eager has two
        return (x.float() + y.float() * g.float()).to(torch.bfloat16)

    differs = fm.compare(fm.gate_residual, fp32_then_round, _make(4096), trials=5)
    assert not differs.exact and differs.equal < 5 and differs.max_diff > 0


def test_fp8_results_are_compared_by_their_bytes():
    h = torch.randn(64, 32).to(torch.bfloat16) * 100
    one = torch.ones(())
    q = fm._torch_quantize(h, one)
    assert q.dtype == torch.float8_e4m3fn and fm._bits(q).dtype == torch.uint8
    assert fm.compare(fm._torch_quantize, fm._torch_quantize, lambda t: (h, one), trials=2).exact
    halved = fm.compare(fm._torch_quantize, lambda x, s: fm._torch_quantize(x, s * 2), lambda t: (h, one), trials=2)
    assert not halved.exact


def test_every_site_names_a_chain_whose_eager_form_runs_on_small_inputs():
    chains = {
        "layernorm_modulate": (fm._modulate_inputs, fm.layernorm_modulate),
        "gate_residual": (fm._gate_inputs, fm.gate_residual),
        "gelu_cat": (fm._gelu_cat_inputs, fm.gelu_cat),
        "qk_norm_rope": (fm._qk_inputs, fm.qk_norm_rope),
        "rmsnorm_tanh_gate_residual": (fm._rms_gate_inputs, fm.rmsnorm_tanh_gate_residual),
        "rmsnorm_modulate": (fm._rms_mod_inputs, fm.rmsnorm_modulate),
        "silu_mul": (fm._silu_inputs, fm.silu_mul),
        "modulate_quantize": (fm._modulate_quant_inputs, fm.modulate_quantize),
        "gelu_quantize": (fm._gelu_quant_inputs, fm.gelu_quantize),
    }
    sites = fm.sites(1024)
    assert {s.pattern for s in sites} == set(chains)
    assert {s.model for s in sites} == {"flux", "flux fp8", "qwen_image", "zimage"}
    assert all(s.shape.tokens >= 128 and s.per_forward > 0 for s in sites)
    for site in sites:
        inputs, eager = chains[site.pattern]
        shape = fm._smoke_shape(site.shape)
        out = fm._flat(eager(*inputs(shape, torch.Generator().manual_seed(0), "cpu", 1.0)))
        assert all(t.shape[-1] in (128, shape.dim, shape.hidden, shape.dim + shape.hidden) for t in out), site


def test_the_map_names_what_is_not_exact_and_sums_only_exact_savings():
    rows = [
        {"model": "flux", "pattern": "gate_residual", "where": "single", "per_forward": 38, "tokens": 4352,
         "eager_us": 30.0, "candidates": {
             "inductor": {"equal": 20, "trials": 20, "max_diff": 0.0, "error": "", "exact": True, "us": 20.0, "saving_ms_per_forward": 0.38},
             "other": {"equal": 3, "trials": 20, "max_diff": 0.0625, "error": "", "exact": False, "us": 5.0, "saving_ms_per_forward": 0.95},
         }},
    ]  # fmt: skip
    text = fm.format_map(rows, smoke=False)
    assert "| yes (20) |" in text and "no: 3/20 equal, max diff 0.0625 (20)" in text
    assert "flux: the exact fused forms save 0.38 ms" in text and fm.SMOKE_LINE not in text
    assert fm.format_map(rows, smoke=True).startswith(fm.SMOKE_LINE)


def test_block_levels_leave_norms_then_linears_to_eager():
    from bench import fusion_blocks as fb

    block = torch.nn.Sequential(torch.nn.LayerNorm(8), torch.nn.Linear(8, 8), torch.nn.RMSNorm(8), torch.nn.GELU())
    kinds = {level: sorted(type(m).__name__ for m in fb._opaque_for(block, level)) for level in fb.LEVELS}
    assert kinds == {
        "fused": [],
        "norms eager": ["LayerNorm", "RMSNorm"],
        "norms, linears eager": ["LayerNorm", "Linear", "RMSNorm"],
    }


def test_block_trials_scale_hidden_states_only_and_the_table_says_what_is_exact():
    from bench import fusion_blocks as fb

    hidden, vec = torch.ones(1, 100, 4), torch.ones(1, 4)
    (h,), kw = fb._scaled((hidden,), {"vec": vec, "pe": torch.ones(1, 1, 100, 2)}, 10.0)
    assert (
        torch.equal(h, hidden * 10) and torch.equal(kw["vec"], vec) and torch.equal(kw["pe"], torch.ones(1, 1, 100, 2))
    )
    assert fb._equal((hidden, vec), (hidden.clone(), vec.clone())) == (True, 0.0)
    assert fb._equal(hidden, hidden + 1) == (False, 1.0)
    row = {"family": "flux", "weights": "default", "blocks": "single_blocks", "tokens": 4352, "per_forward": 38,
           "eager_us": 1000.0, "fused": {"equal": 1, "trials": 3, "max_diff": 0.5, "us": 800.0},
           "norms eager": {"equal": 3, "trials": 3, "max_diff": 0.0, "us": 900.0},
           "norms, linears eager": {"error": "BackendCompilerFailed: x"}}  # fmt: skip
    text = fb.format_blocks([row], smoke=False)
    assert "not exact (1/3, max diff 0.5), 800.0 µs (+7.60 ms / forward)" in text
    assert "exact, 900.0 µs (+3.80 ms / forward)" in text and "failed: BackendCompilerFailed: x" in text
    assert fb.format_blocks([row], smoke=True).startswith(fb.SMOKE_LINE)
