"""The server benchmark's pure parts: timings from websocket messages, the spread and the per-variant
summary, the markdown table, the command line and the variants' workflows."""

import math

import re

from pathlib import Path

import pytest

from bench import comfy_workflow, server, server_report, server_stats

pytestmark = pytest.mark.unit
KS = comfy_workflow.SAMPLER_ID


def _messages(step_times, start=1.0, sampler_start=0.5, end_pad=0.25, node=KS):
    """Messages of one prompt: loader at 0.1, KSampler executing at ``sampler_start``, a progress
    message at each of ``step_times``, SaveLatent after the last, the end ``end_pad`` later."""
    steps = len(step_times)
    msgs = [(0.0, "execution_start", {}), (0.01, "execution_cached", {"nodes": ["4"]}), (0.1, "executing", {"node": "1"}),
            (sampler_start, "executing", {"node": node})]  # fmt: skip
    msgs += [(t, "progress", {"node": node, "value": i + 1, "max": steps}) for i, t in enumerate(step_times)]
    last = step_times[-1]
    msgs += [(last + 0.05, "executing", {"node": "13"}), (last + end_pad, "executing", {"node": None})]
    return msgs


def test_denoise_is_the_steady_rate_over_all_steps():
    # step 1 ends at 2.0 (slow: setup), then 0.5 s per step
    msgs = _messages([2.0, 2.5, 3.0, 3.5])
    d = server_stats.denoise(msgs, KS)
    assert d["steps"] == 4 and d["step_s"] == pytest.approx(0.5) and d["denoise_s"] == pytest.approx(2.0)
    assert (d["first_progress_s"], d["last_progress_s"]) == (2.0, 3.5) and d["progress_span_s"] == pytest.approx(1.5)


def test_prompt_timings_split_the_wall_time():
    msgs = _messages([2.0, 2.5, 3.0, 3.5], sampler_start=0.5)
    t = server_stats.prompt_timings(msgs, wall_s=3.8, sampler_id=KS)
    assert t["outside_s"] == pytest.approx(1.8)  # 3.8 wall - 2.0 denoise at the steady rate
    assert t["sampler_setup_s"] == pytest.approx(1.0)  # first step took 1.5 s from the sampler's start, a step is 0.5
    assert t["nodes_s"]["1"] == pytest.approx(0.4) and t["nodes_s"][KS] == pytest.approx(3.55 - 0.5)
    assert t["nodes_s"]["13"] == pytest.approx(0.2) and None not in t["nodes_s"]


def test_denoise_needs_two_progress_messages_and_takes_the_last_pass():
    assert server_stats.denoise(_messages([1.0]), KS)["denoise_s"] is None
    assert server_stats.prompt_timings(_messages([1.0]), 2.0, KS)["outside_s"] is None
    other_node = _messages([1.0, 2.0], node="99")
    assert server_stats.denoise(other_node, KS)["steps"] is None
    # a second sampling pass restarts the count: its rate counts, not the first's
    msgs = _messages([1.0, 2.0, 3.0]) + [
        (4.0, "progress", {"node": KS, "value": 1, "max": 2}),
        (4.1, "progress", {"node": KS, "value": 2, "max": 2}),
    ]
    d = server_stats.denoise(msgs, KS)
    assert d["steps"] == 2 and d["step_s"] == pytest.approx(0.1)


def test_spread_is_max_over_median():
    assert server_stats.spread([1.0, 1.0, 1.5]) == pytest.approx(1.5)
    assert server_stats.spread([0.95, 1.43, 1.0, 1.0]) == pytest.approx(1.43)
    assert server_stats.spread([2.0]) == 1.0
    assert server_stats.spread([]) is None and server_stats.spread([None]) is None


def _prompt(
    wall, denoise=None, equal=None, diff=None, eager=None, calls=None, replayed=None, reserved=1024.0, rss=2048.0
):
    return {"wall_s": wall, "denoise_s": denoise, "outside_s": None if denoise is None else wall - denoise, "sampler_setup_s": 0.3,
            "bit_equal": equal, "max_abs_diff": diff, "eager": eager, "calls": calls, "replayed": replayed,
            "reserved_mib": reserved, "allocated_mib": reserved / 2, "rss_mib": rss}  # fmt: skip


def test_summary_sets_the_first_prompt_apart():
    eager = server_stats.summarize([_prompt(7.6, 0.9), _prompt(1.0, 0.8), _prompt(1.1, 0.8), _prompt(1.0, 0.8)])
    assert (
        eager["first_wall_s"] == 7.6 and eager["median_wall_s"] == 1.0 and eager["first_cost_s"] == pytest.approx(6.6)
    )
    assert eager["spread"] == pytest.approx(1.1) and eager["max_wall_s"] == 1.1 and eager["compared"] == 0
    bcg = server_stats.summarize(
        [_prompt(5.7, 0.4, True, 0.0, {"not captured: 1024x1024": 1}, 8, 7, reserved=4096.0), _prompt(0.5, 0.4, True, 0.0, {}, 8, 8),
         _prompt(0.5, 0.4, False, 0.25, {}, 8, 8)],
        eager_median_wall=eager["median_wall_s"],
    )  # fmt: skip
    assert bcg["vs_eager"] == pytest.approx(2.0) and bcg["spread"] == pytest.approx(1.0)
    assert (bcg["bit_equal"], bcg["compared"], bcg["max_abs_diff"]) == (2, 3, 0.25)
    assert (bcg["replayed"], bcg["calls"]) == (23, 24) and bcg["eager_reasons"] == {"not captured: 1024x1024": 1}
    assert bcg["peak_reserved_mib"] == 4096.0 and bcg["median_denoise_s"] == pytest.approx(0.4)
    one = server_stats.summarize([_prompt(2.0)])
    assert one["first_cost_s"] is None and one["median_wall_s"] == 2.0 and one["spread"] == 1.0


def _job():
    prompts = [dict(_prompt(1.0, 0.8), size="512x512", variant="eager", index=0, seed=1000),
               dict(_prompt(0.5, 0.4, True, 0.0, {"disabled: no CUDA": 2}, 2, 0), size="512x512", variant="bcg", index=0, seed=1000),
               dict(_prompt(0.4, 0.3, False, 0.01, {}, 2, 2), size="512x512", variant="fast", index=0, seed=1000)]  # fmt: skip
    summaries = [
        {
            "size": "512x512",
            "variant": p["variant"],
            **server_stats.summarize([p], 1.0 if p["variant"] != "eager" else None),
        }
        for p in prompts
    ]
    return {"family": "flux", "weights": "fp8_scaled", "depth": None, "prompts": prompts, "summaries": summaries}


def test_markdown_table():
    table = server_report.format_table(
        [_job(), {"family": "qwen_image", "weights": "bf16", "depth": 2, "error": "RuntimeError: boom"}]
    )
    lines = table.splitlines()
    assert (
        lines[0].startswith("| model | res | variant |")
        and lines[1] == "| " + " | ".join(["---"] * len(server_report.HEAD)) + " |"
    )
    assert all(line.count("|") == len(server_report.HEAD) + 1 for line in lines)
    eager, bcg, fast, error = lines[2:]
    assert eager.startswith("| flux fp8_scaled | 512x512 | eager | 1 | 1.000 |") and "| 1.0/0.5 | 2.0 |" in eager
    assert "| 2.00x |" in bcg and "| 1/1 | 0/2 |" in bcg
    assert "0/1 (max diff 0.01) (fast: not exact by design)" in fast and "| 2/2 |" in fast
    assert error.startswith("| qwen_image depth 2 | - | error: RuntimeError: boom |")


def test_a_cpu_smoke_report_says_so_first_and_gives_no_speed_or_vram():
    report = server_report.format_report({"cpu_smoke": True}, [_job()])
    assert report.startswith("smoke test, not a benchmark: no CUDA (--cpu)")
    rows = [line for line in report.splitlines() if line.startswith("| flux fp8_scaled")]
    speed, vram = (server_report.HEAD.index(name) + 1 for name in ("vs eager", "VRAM res/alloc GiB"))
    assert rows and all(line.split("|")[speed].strip() == line.split("|")[vram].strip() == "-" for line in rows), rows
    assert "| 2.00x |" in server_report.format_report({}, [_job()])  # a CUDA run keeps them


def test_fidelity_is_max_abs_and_psnr_over_the_reference_range():
    torch = pytest.importorskip("torch")
    reference = torch.tensor([[0.0, 1.0], [2.0, 4.0]], dtype=torch.bfloat16)
    got = reference.clone()
    got[0, 0] = 0.5  # one element off by 0.5: mse 0.0625, peak-to-peak 4
    f = server.fidelity(got, reference)
    assert f["max_abs"] == 0.5 and f["psnr_db"] == pytest.approx(10 * math.log10(16 / 0.0625))
    assert server.fidelity(reference, reference) == {"max_abs": 0.0, "psnr_db": None}
    assert server.fidelity(reference[:1], reference) is None


def test_a_quantised_model_stands_against_bf16_eager():
    bf16 = _job()
    bf16["weights"] = "bf16"
    bf16["summaries"][0]["median_wall_s"] = 3.5  # bf16 eager 512x512
    fp8 = _job()
    for p, psnr in zip(fp8["prompts"], (41.0, 38.5, 30.25)):
        p["vs_bf16_eager"] = {"max_abs": 0.5 if psnr < 31 else 0.1, "psnr_db": psnr}
    fp8["summaries"] = [
        {"size": "512x512", "variant": p["variant"], **server_stats.summarize([p])} for p in fp8["prompts"]
    ]
    s = fp8["summaries"][2]
    assert (s["vs_bf16_compared"], s["vs_bf16_max_abs"], s["vs_bf16_min_psnr_db"]) == (1, 0.5, 30.25)
    lines = server_report.format_bf16_table([bf16, fp8]).splitlines()
    assert lines[0].startswith("| model | res | variant | median s | bf16 eager median s |") and len(lines) == 5
    assert lines[4] == "| flux fp8_scaled | 512x512 | fast | 0.400 | 3.500 | 8.75x | 1 | 0.5 | 30.2 |"
    assert server_report.format_bf16_table([bf16]) == ""  # nothing measured against bf16: no table
    assert server_report.BF16_TITLE in server_report.format_report({}, [bf16, fp8])
    assert server_report.BF16_TITLE not in server_report.format_report({}, [bf16])
    identical = _job()
    identical["prompts"][0]["vs_bf16_eager"] = {"max_abs": 0.0, "psnr_db": None}
    identical["summaries"] = [
        {"size": "512x512", "variant": "eager", **server_stats.summarize(identical["prompts"][:1])}
    ]
    assert server_report.format_bf16_table([bf16, identical]).splitlines()[2].endswith("| 1 | 0 | identical |")


def test_the_gpu_clock_is_read_beside_the_slowest_prompt():
    prompts = [
        dict(_prompt(w), sm_clock_mhz=c, power_w=600.0) for w, c in ((5.0, 1980), (1.0, 1980), (1.5, 1755), (1.0, 1970))
    ]
    s = server_stats.summarize(prompts)
    assert (s["median_sm_clock_mhz"], s["slowest_sm_clock_mhz"]) == (1970, 1755)
    assert (
        server_report.clock_cell(s) == "1970 (1755)"
        and server_report.clock_cell(server_stats.summarize([_prompt(1.0)])) == "-"
    )
    job = _job()
    job["prompts"][0].update(sm_clock_mhz=1980.4, power_w=612.0)
    assert server_report.format_prompts(job)[0].endswith(", RSS 2.0 GiB, SM 1980 MHz 612 W")  # eager: no equality
    assert " SM " not in server_report.format_prompts(job)[1]  # no nvidia-smi reading: no clock


def test_prompt_lines_name_eager_reasons():
    lines = server_report.format_prompts(_job())
    assert (
        "bcg #0 seed 1000: wall 0.500 s, denoise 0.400 s" in lines[1]
        and "bit-equal True; eager: 2x disabled: no CUDA" in lines[1]
    )


def test_command_line():
    args = server.parse_args(["--cpu", "--models", "flux:fp8_scaled,zimage", "--variants", "fast,bcg"])
    assert args.model_list == [("flux", "fp8_scaled"), ("zimage", "bf16")]
    assert args.variant_list == ["eager", "bcg", "fast"]  # eager always, in run order
    assert (args.size_lists, args.prompts, args.depth, args.steps) == (
        {"flux": [(64, 64)], "zimage": [(64, 64)]},
        2,
        1,
        2,
    )
    full = server.parse_args([])
    assert (full.size_lists, full.prompts, full.depth, full.steps) == (
        {"zimage": [(512, 512), (1024, 1024)]},
        3,
        None,
        None,
    )
    for bad in (["--models", "sd3"], ["--models", "flux:fp4"], ["--variants", "turbo"], ["--sizes", "12"]):
        with pytest.raises(SystemExit):
            server.parse_args(bad)


def test_server_args_follow_the_stock_start():
    """``--server-args``: flags after the stock ``python main.py`` (a start that is no longer the
    stock one, which the report's header then shows); none by default."""
    from bench.comfy_server import ComfyServer

    assert server.parse_args([]).server_args.split() == []
    flags = server.parse_args(["--server-args=--disable-dynamic-vram --highvram"]).server_args.split()
    stock = ComfyServer(Path("/tmp/tree"), cuda=True, bare=True)
    started = ComfyServer(Path("/tmp/tree"), cuda=True, bare=True, extra_args=flags)
    assert stock.command()[1:] == ["main.py"]
    assert started.command()[1:] == ["main.py", "--disable-dynamic-vram", "--highvram"]


def test_video_families_take_frame_counts_and_image_families_refuse_them():
    both = server.parse_args(["--models", "zimage,minimax_h3,wan"])
    assert both.size_lists == {
        "zimage": [(512, 512), (1024, 1024)],
        "minimax_h3": [(1344, 768, 124)],
        "wan": [(832, 480, 33)],
    }
    assert server.parse_args(["--cpu", "--models", "minimax_h3"]).size_lists == {"minimax_h3": [(64, 64, 5)]}
    for models, sizes, says in (
        ("minimax_h3", "1344x768", "minimax_h3 makes video: give WIDTHxHEIGHTxFRAMES (e.g. 1344x768x124)"),
        ("zimage,wan", "512x512x5", "zimage makes images: give WIDTHxHEIGHT"),
    ):
        with pytest.raises(SystemExit, match=re.escape(says)):
            server.parse_args(["--models", models, "--sizes", sizes])


def test_a_family_without_mode_fast_leaves_that_variant_out_saying_why():
    variants = ["eager", "bcg", "warmup", "fast"]
    assert server.family_variants("zimage", variants) == (variants, {})
    for family, name, why in (("minimax_h3", "MiniMax H3", "replay host reads"), ("wan", "Wan", "stage host copies")):
        kept, left_out = server.family_variants(family, variants)
        assert kept == ["eager", "bcg", "warmup"]
        assert left_out == {"fast": f"mode: 'fast' is not available for {name} yet (its captures {why}); use 'auto'"}
    job = {
        "family": "wan",
        "weights": "bf16",
        "depth": None,
        "prompts": [],
        "summaries": [],
        "variants_left_out": left_out,
    }
    assert f"Not run: {server_report.model_label(job)} fast: {left_out['fast']}" in server_report.format_report(
        {}, [job]
    )


def test_a_video_family_gets_its_own_shift_and_latent_nodes():
    base = comfy_workflow.latent_workflow(
        "m.safetensors", "cond", (1344, 768, 124), 8, 5, prefix="x", family="minimax_h3"
    )
    shift, latent = base[comfy_workflow.SHIFT_ID], base[comfy_workflow.LATENT_ID]
    assert shift["class_type"] == "MiniMaxH3SigmaShift" and shift["inputs"]["model"] == ["1", 0], shift
    assert latent == {"class_type": "EmptyMiniMaxH3LatentAV", "inputs": {"width": 1344, "height": 768, "length": 124}}
    assert base[comfy_workflow.WARMUP_ID]["inputs"]["resolutions"] == "1344x768x124"
    assert base[KS]["inputs"]["latent_image"] == [comfy_workflow.LATENT_ID, 0]
    # H3's latent holds video and audio (a NestedTensor SaveLatent cannot write): both streams saved
    assert base[comfy_workflow.SEPARATE_ID]["inputs"]["av_latent"] == [KS, 0]
    saves = {i: base[i]["inputs"] for i in (comfy_workflow.SAVE_LATENT_ID, comfy_workflow.AUDIO_SAVE_ID)}
    assert [v["samples"] for v in saves.values()] == [[comfy_workflow.SEPARATE_ID, 0], [comfy_workflow.SEPARATE_ID, 1]]
    eager = server.variant_prompt(base, "eager", "p/e")
    assert [eager[i]["inputs"]["filename_prefix"] for i in saves] == ["p/e", "p/e_audio"]
    wan = comfy_workflow.latent_workflow("m.safetensors", "cond", (832, 480, 33), 8, 5, prefix="x", family="wan")
    assert wan[comfy_workflow.LATENT_ID]["inputs"] == {"width": 832, "height": 480, "length": 33, "batch_size": 1}
    assert wan[comfy_workflow.SHIFT_ID]["class_type"] == "ModelSamplingSD3" and comfy_workflow.SEPARATE_ID not in wan
    with pytest.raises(ValueError, match="WIDTHxHEIGHTxFRAMES"):
        comfy_workflow.latent_workflow("m.safetensors", "cond", (832, 480), 8, 5, prefix="x", family="wan")
    with pytest.raises(ValueError, match="zimage makes images"):
        comfy_workflow.latent_workflow("m.safetensors", "cond", (832, 480, 33), 8, 5, prefix="x", family="zimage")


def test_no_cuda_says_what_it_needs(monkeypatch, capsys):
    monkeypatch.setattr(server, "cuda_available", lambda: False)
    assert server.main([]) == 2
    assert "no CUDA" in capsys.readouterr().err and "--cpu" in server.NO_CUDA


def test_variant_workflows():
    base = comfy_workflow.latent_workflow(
        "m.safetensors", "cond", (512, 512), 8, 5, prefix="x", capture="on first call"
    )
    eager = server.variant_prompt(base, "eager", "p/e")
    assert comfy_workflow.APPLY_ID not in eager and comfy_workflow.WARMUP_ID not in eager
    assert eager[KS]["inputs"]["model"] == base[comfy_workflow.APPLY_ID]["inputs"]["model"]
    bcg = server.variant_prompt(base, "bcg", "p/b")
    assert comfy_workflow.WARMUP_ID not in bcg and bcg[KS]["inputs"]["model"] == [comfy_workflow.APPLY_ID, 0]
    assert (
        bcg[comfy_workflow.APPLY_ID]["inputs"]["mode"] == "auto"
        and bcg[comfy_workflow.APPLY_ID]["inputs"]["capture"] == "on first call"
    )
    warm = server.variant_prompt(base, "warmup", "p/w")
    assert (
        warm[KS]["inputs"]["model"] == [comfy_workflow.WARMUP_ID, 0]
        and warm[comfy_workflow.APPLY_ID]["inputs"]["capture"] == "warm-up only"
    )
    assert warm[comfy_workflow.WARMUP_ID]["inputs"]["resolutions"] == "512x512"
    fast = server.variant_prompt(base, "fast", "p/f")
    assert fast[comfy_workflow.APPLY_ID]["inputs"]["mode"] == "fast"
    assert [p[comfy_workflow.SAVE_LATENT_ID]["inputs"]["filename_prefix"] for p in (eager, bcg, warm, fast)] == [
        "p/e",
        "p/b",
        "p/w",
        "p/f",
    ]
    assert (
        base[comfy_workflow.APPLY_ID]["inputs"]["capture"] == "on first call" and comfy_workflow.WARMUP_ID in base
    )  # untouched
    for prompt in (eager, bcg, warm, fast):  # same seed, sampler and conditioning as the base
        assert {k: v for k, v in prompt[KS]["inputs"].items() if k != "model"} == {
            k: v for k, v in base[KS]["inputs"].items() if k != "model"
        }


def test_a_bcg_latent_equal_to_the_eager_repeat_is_no_exactness_failure():
    """Stock ComfyUI's first prompt of a process may differ from the same prompt later (seen on
    the H200 with Dynamic VRAM): a BCG latent equal to eager's repeat is exact; one equal to
    neither is a failure; the table says which."""
    from bench import server

    def job(prompts):
        return {"jobs": [{"family": "zimage", "weights": "bf16", "prompts": prompts}]}

    odd_reference = {
        "variant": "bcg",
        "size": "512x512",
        "index": 0,
        "bit_equal": False,
        "bit_equal_to_eager_repeat": True,
    }
    wrong = {"variant": "warmup", "size": "512x512", "index": 0, "bit_equal": False, "bit_equal_to_eager_repeat": False}
    assert server.exact_failures(job([odd_reference])) == []
    assert server.exact_failures(job([odd_reference, wrong])) == ["zimage bf16 512x512 warmup #0"]
    cell = server_report.equality_cell(
        {"bit_equal": 2, "compared": 3, "max_abs_diff": 0.131, "equal_to_eager_repeat": 1}, "bcg"
    )
    assert cell == "2/3 (max diff 0.131); 1 equal to eager run again (eager's first run differed)"


def test_a_port_left_in_time_wait_is_free_and_a_listening_one_is_not():
    """The second model's server binds the port the first just left (TIME_WAIT after its
    connections): ComfyUI binds with SO_REUSEADDR, so the check does too."""
    import socket

    from bench.comfy_server import port_taken

    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    assert port_taken(port)
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = listener.accept()
    accepted.close()  # the server side closes first: its end of the port waits in TIME_WAIT
    client.close()
    listener.close()
    assert not port_taken(port)
