"""The benchmark's mode grammar: a base mode, optionally after an attention backend (``sage+bcg``),
and which mode a stacked BCG row must equal bit for bit."""

import json
import re

import pytest

from bench.modes import reference_mode, split_mode, warmup_cost, without_bcg
from bench.report import Row, format_kernel_split, format_table, kernel_kind

pytestmark = pytest.mark.unit


def test_modes_split_into_the_stacked_tools_and_the_base():
    assert split_mode("bcg") == ((), "bcg")
    assert split_mode("compile-inductor") == ((), "compile-inductor")
    assert split_mode("sage") == (("sage",), "eager")
    assert split_mode("sage+bcg-full") == (("sage",), "bcg-full")
    assert split_mode("flash+fast") == (("flash",), "fast")
    assert split_mode("easycache+bcg-full") == (("easycache",), "bcg-full")
    assert split_mode("sage+easycache") == (("sage", "easycache"), "eager")
    assert split_mode("lazycache+sage+bcg") == (("lazycache", "sage"), "bcg")
    assert split_mode("ck+fast") == (("ck",), "fast")
    assert split_mode("cudnn+easycache+bcg-full") == (("cudnn", "easycache"), "bcg-full")
    assert split_mode("compile-inductor+bcg-full") == (("compile-inductor",), "bcg-full")
    assert split_mode("easycache+compile-cudagraphs+bcg") == (("easycache", "compile-cudagraphs"), "bcg")
    assert split_mode("sagekj+bcg-full") == (("sagekj",), "bcg-full")
    assert without_bcg("sagekj+bcg-full") == "sagekj"


@pytest.mark.parametrize(
    "mode",
    # A compile mode stacks only before a BCG mode, and only one of them.
    [
        "sage+turbo",
        "xformers+bcg",
        "bcg+sage",
        "sage+flash+bcg",
        "ck+cudnn",
        "sage+sagekj",
        "easycache+lazycache",
        "",
        "compile-inductor+sage",
        "compile-inductor+eager",
        "compile-inductor+compile-cudagraphs+bcg-full",
    ],
)
def test_an_unknown_mode_names_the_field_and_what_is_accepted(mode):
    with pytest.raises(
        SystemExit,
        match=f"--modes: unknown mode '{re.escape(mode)}'; accepted: eager, .*one attention backend and one step cache \\(sage, flash, ck, cudnn, sagekj, easycache, lazycache\\).*compile-inductor\\+bcg-full",
    ):
        split_mode(mode)


def test_exact_bcg_modes_are_compared_with_the_same_stack_without_bcg():
    assert without_bcg("bcg") == "eager"
    assert without_bcg("bcg-full") == "eager"
    assert without_bcg("bcg-eager") == "eager"  # every call eager under BCG: eager's output
    assert without_bcg("sage+bcg-eager") == "sage"
    assert without_bcg("sage+bcg-full") == "sage"
    assert without_bcg("sage+easycache+bcg-full") == "sage+easycache"
    assert without_bcg("fast") is None  # not bit-exact by design
    assert without_bcg("sage+fast") is None
    assert without_bcg("compile-inductor") is None
    assert without_bcg("compile-inductor+bcg-full") == "compile-inductor"  # BCG steps aside there
    assert without_bcg("sage") is None


@pytest.mark.parametrize(
    "name, kind",
    [
        ("flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>", "attention"),
        ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16", "attention"),
        ("_attn_fwd", "attention"),  # sageattention's triton kernel
        ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64", "gemm"),
        ("nvjet_tst_256x128_64x4_1x2_h_bz_coopB_TNT", "gemm"),
        ("triton_tem_fused_mm_3", "gemm"),  # an inductor GEMM template
        ("triton_per_fused_add_mul_native_layer_norm_4", "triton fused"),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>",
            "elementwise/other",
        ),
        ("Memcpy DtoD (Device -> Device)", "copy"),
    ],
)
def test_kernels_are_sorted_by_the_work_they_do(name, kind):
    assert kernel_kind(name) == kind


@pytest.mark.parametrize(
    "mode, measured, reference",
    [
        ("sage+bcg-full", {"eager", "sage"}, "sage"),
        ("bcg-full", {"eager"}, "eager"),
        ("sage+bcg-full", {"eager"}, None),  # sage alone not measured: nothing to compare with
        ("compile-inductor", {"eager", "compile-inductor"}, "compile-inductor"),  # listed again
        ("bcg-full", {"eager", "bcg-full"}, "bcg-full"),
        ("compile-inductor", {"eager"}, None),
        ("fast", {"eager"}, None),
    ],
)
def test_a_row_is_compared_with_its_mode_without_bcg_or_with_its_first_listing(mode, measured, reference):
    assert reference_mode(mode, measured) == reference


def test_a_mode_listed_again_is_labelled_so_with_its_comparison_in_the_table():
    first = Row("flux", "512x512", "compile-inductor", 20, 1.0, denoise_s=0.9)
    second = Row("flux", "512x512", "compile-inductor", 20, 1.0, denoise_s=0.9, again=True, equals_without_bcg=False)
    _, a, b = format_table([first, second]).splitlines()
    assert [c.strip() for c in a.split("|")][2] == "compile-inductor"
    cells = [c.strip() for c in b.split("|")]
    assert cells[2] == "compile-inductor again" and cells[10] == "NO"


def test_the_kernel_split_table_has_a_column_per_kind_seen_and_the_total():
    a = Row(
        "zimage",
        "1024x1024",
        "eager",
        8,
        1.0,
        kernel_s=0.9,
        kernel_split={"gemm": 0.6, "attention": 0.2, "elementwise/other": 0.1},
    )
    b = Row(
        "flux",
        "1024x1024",
        "fast",
        8,
        1.0,
        kernel_s=0.8,
        kernel_split={"gemm": 0.6, "attention": 0.15, "triton fused": 0.05},
    )
    unprofiled = Row("zimage", "1024x1024", "bcg", 8, 1.0)
    header, *lines = format_kernel_split([a, unprofiled, b]).splitlines()
    assert [c.strip() for c in header.split("|")] == [
        "model",
        "res",
        "mode",
        "attention",
        "gemm",
        "triton fused",
        "elementwise/other",
        "total",
    ]
    assert [c.strip() for c in lines[1].split("|")] == [
        "flux",
        "1024x1024",
        "fast",
        "0.150",
        "0.600",
        "0.050",
        "0.000",
        "0.800",
    ]
    assert len(lines) == 2


def test_the_kernel_split_gives_the_clock_and_power_where_they_were_sampled():
    a = Row(
        "zimage", "1024x1024", "eager", 8, 1.0, kernel_s=0.9, kernel_split={"gemm": 0.9}, sm_clock_mhz=1980, power_w=540
    )
    b = Row("zimage", "1024x1024", "fast", 8, 1.0, kernel_s=0.8, kernel_split={"gemm": 0.8})
    header, *lines = format_kernel_split([a, b]).splitlines()
    assert [c.strip() for c in header.split("|")][-2:] == ["SM MHz", "power W"]
    assert [c.strip() for c in lines[0].split("|")][-2:] == ["1980", "540"]
    assert [c.strip() for c in lines[1].split("|")][-2:] == ["-", "-"]


@pytest.mark.parametrize("plan", ["512x512,1024x1024", ":128", "512x512:"])
def test_a_warmup_cost_plan_without_both_parts_names_the_option(plan):
    with pytest.raises(SystemExit, match=f"--warmup-cost: '{re.escape(plan)}' is not RESOLUTIONS:TEXT_BUCKETS"):
        warmup_cost(None, "fast", plan)


def test_the_combined_table_names_each_run_s_weight_format(tmp_path, capsys):
    """``bench_table`` over the suite's JSON files: the same family in two weight formats stays apart."""
    from bench import table as bench_table

    env = {"gpu": "H200", "torch": "2.11", "comfyui": "0.33.0", "comfy_kitchen": None, "date": "2026-12-01"}
    row = {
        "family": "flux",
        "resolution": "512x512",
        "mode": "eager",
        "steps": 20,
        "cfg": 1.0,
        "denoise_s": 1.0,
        "kernel_s": 0.5,
        "kernel_split": {"gemm": 0.5},
    }
    for name, weight_dtype in (("bf16", "default"), ("fp8", "comfy_quant_fp8")):
        (tmp_path / f"{name}.json").write_text(
            json.dumps({"env": {**env, "weight_dtype": weight_dtype}, "rows": [row]})
        )
    assert bench_table.main([str(tmp_path / "bf16.json"), str(tmp_path / "fp8.json")]) == 0
    models = [line.split("|")[0].strip() for line in capsys.readouterr().out.splitlines() if "512x512" in line]
    assert models == ["flux", "flux comfy_quant_fp8", "flux", "flux comfy_quant_fp8"], models


def test_the_host_profile_names_the_functions_one_denoise_spent_its_python_time_in(monkeypatch):
    from bench import measure, report

    def busy_host_work():
        return sum(i * i for i in range(200_000))

    def denoise(*args, **kwargs):
        for _ in range(3):
            busy_host_work()
        return None, 0.0

    monkeypatch.setattr(measure, "timed_sample", denoise)
    top, calls, own_seconds = measure.host_profile(None, "flux", (64, 64), 1, 1.0, None, None, top=2)
    assert len(top) == 2 and own_seconds > 0 and calls > 3
    assert any(
        f["function"].endswith("(busy_host_work)") and f["calls"] == 3
        for f in measure.host_profile(None, "flux", (64, 64), 1, 1.0, None, None, top=50)[0]
    )
    row = Row(
        "flux",
        "512x512",
        "compile-inductor",
        20,
        1.0,
        again=True,
        host_top=top,
        host_calls=calls,
        host_python_s=own_seconds,
    )
    line = report.format_host_profiles([row, Row("flux", "512x512", "eager", 20, 1.0)])
    assert line.startswith(f"flux | 512x512 | compile-inductor again | {calls} calls, ") and top[0]["function"] in line
    assert len(line.splitlines()) == 1  # a row without a host profile gets no line


def test_a_mode_whose_own_runs_differ_says_so_in_the_exact_column():
    rows = [
        Row(
            "flux",
            "512x512",
            "compile-inductor",
            20,
            1.0,
            denoise_s=0.9,
            exact=False,
            max_abs_diff=4.33,
            repeatable=False,
        ),
        Row("flux", "512x512", "bcg-full", 20, 1.0, denoise_s=0.9, exact=True, repeatable=True),
    ]
    _, varies, steady = format_table(rows).splitlines()
    assert [c.strip() for c in varies.split("|")][9] == "no (4.33), varies"
    assert [c.strip() for c in steady.split("|")][9] == "yes"
