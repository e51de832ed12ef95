"""The server benchmark's tables: one markdown row per (model, size, variant), ready to paste into
docs/benchmarks.md beside the in-process rows, and the per-prompt lines. Plain Python: reads the
JSON ``bench.server`` writes; ``python -m bench.server_report out/*.json`` prints the table of
several runs.
"""

from __future__ import annotations

import json
import sys
from typing import Any

HEAD = [
    "model", "res", "variant", "prompts", "first s", "median s", "max/median", "denoise s", "outside s",
    "vs eager", "first extra s", "VRAM res/alloc GiB", "RSS GiB", "bit-equal", "replayed", "SM MHz (slowest)",
]  # fmt: skip


def render_markdown(lines: list[list[Any]]) -> str:
    """``lines`` (a header first) as a markdown table."""
    rows = [lines[0], ["---"] * len(lines[0]), *lines[1:]]
    return "\n".join("| " + " | ".join(str(c) for c in row) + " |" for row in rows)


def _s(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _gib(mib: float | None) -> str:
    return "-" if mib is None else f"{mib / 1024:.1f}"


def model_label(job: dict) -> str:
    """``flux``, ``flux fp8_scaled``, with ``depth N`` where the model is cut down."""
    label = job["family"] + ("" if job.get("weights", "bf16") == "bf16" else f" {job['weights']}")
    return label + (f" depth {job['depth']}" if job.get("depth") is not None else "")


def equality_cell(summary: dict, variant: str) -> str:
    """``3/3``; for mode fast (not bit-exact by design) the count and the largest difference."""
    if not summary["compared"]:
        return "-"
    cell = f"{summary['bit_equal']}/{summary['compared']}"
    if summary["bit_equal"] < summary["compared"] and summary.get("max_abs_diff") is not None:
        cell += f" (max diff {summary['max_abs_diff']:.3g})"
    if summary.get("equal_to_eager_repeat"):
        cell += f"; {summary['equal_to_eager_repeat']} equal to eager run again (eager's first run differed)"
    return cell + (
        " (fast: not exact by design)" if variant == "fast" and summary["bit_equal"] < summary["compared"] else ""
    )


def clock_cell(summary: dict) -> str:
    """``1980 (1755)``: the median SM clock of prompts 2..N and that of the slowest of them."""
    median, slowest = summary.get("median_sm_clock_mhz"), summary.get("slowest_sm_clock_mhz")
    return "-" if median is None else f"{median:.0f} ({'-' if slowest is None else f'{slowest:.0f}'})"


def table_lines(jobs: list[dict]) -> list[list[Any]]:
    lines: list[list[Any]] = [HEAD]
    for job in jobs:
        if job.get("error") and not job.get("summaries"):
            lines.append([model_label(job), "-", "error: " + job["error"][:80], *[""] * (len(HEAD) - 3)])
            continue
        for s in job.get("summaries", []):
            replayed = f"{s['replayed']}/{s['calls']}" if s["variant"] != "eager" else "-"
            lines.append([
                model_label(job), s["size"], s["variant"], s["prompts"], _s(s["first_wall_s"]), _s(s["median_wall_s"]),
                _s(s["spread"], 2), _s(s["median_denoise_s"]), _s(s["median_outside_s"]),
                f"{s['vs_eager']:.2f}x" if s.get("vs_eager") else "-", _s(s["first_cost_s"], 2),
                f"{_gib(s['peak_reserved_mib'])}/{_gib(s['peak_allocated_mib'])}", _gib(s["peak_rss_mib"]),
                equality_cell(s, s["variant"]) if s["variant"] != "eager" else "-", replayed, clock_cell(s),
            ])  # fmt: skip
    return lines


#: Columns a ``--cpu`` smoke test leaves blank: a tiny model on the CPU has no speed-up or VRAM to report.
SMOKE_BLANK = ("vs eager", "VRAM res/alloc GiB")
#: The first line of a ``--cpu`` report.
SMOKE_LINE = "smoke test, not a benchmark: no CUDA (--cpu), a depth-1 model at 64x64; no speed-up or VRAM is measured"


def format_table(jobs: list[dict], smoke: bool = False) -> str:
    lines = table_lines(jobs)
    if smoke:
        blank = [HEAD.index(name) for name in SMOKE_BLANK]
        lines = [lines[0]] + [
            [("-" if i in blank and cell != "" else cell) for i, cell in enumerate(line)] for line in lines[1:]
        ]
    return render_markdown(lines)


BF16_TITLE = "Against bf16 eager (same seeds; random-weight synthetic model, so the distance is the format's, not a real image's):"
BF16_HEAD = [
    "model",
    "res",
    "variant",
    "median s",
    "bf16 eager median s",
    "vs bf16 eager",
    "latents",
    "max abs diff",
    "min PSNR dB",
]


def bf16_table_lines(jobs: list[dict]) -> list[list[Any]]:
    """Each variant of a non-bf16 model against the bf16 eager run of its family and size: the
    speed (bf16 eager's median wall over this one's) and the latent's distance (``vs_bf16_*``
    of ``server_stats.summarize``); only the header where no job was measured so."""
    eager_bf16 = {
        (job["family"], job.get("depth"), s["size"]): s["median_wall_s"]
        for job in jobs if job.get("weights", "bf16") == "bf16"
        for s in job.get("summaries", []) if s["variant"] == "eager"
    }  # fmt: skip
    lines: list[list[Any]] = [BF16_HEAD]
    for job in jobs:
        for s in job.get("summaries", []):
            if not s.get("vs_bf16_compared"):
                continue
            ref = eager_bf16.get((job["family"], job.get("depth"), s["size"]))
            speed = f"{ref / s['median_wall_s']:.2f}x" if ref and s["median_wall_s"] else "-"
            psnr = "identical" if s["vs_bf16_min_psnr_db"] is None else f"{s['vs_bf16_min_psnr_db']:.1f}"
            lines.append([model_label(job), s["size"], s["variant"], _s(s["median_wall_s"]), _s(ref), speed,
                          s["vs_bf16_compared"], f"{s['vs_bf16_max_abs']:.3g}", psnr])  # fmt: skip
    return lines


def format_bf16_table(jobs: list[dict]) -> str:
    """:func:`bf16_table_lines` as markdown; empty where nothing was measured against bf16."""
    lines = bf16_table_lines(jobs)
    return render_markdown(lines) if len(lines) > 1 else ""


def env_line(env: dict) -> str:
    return (f"{env.get('device')}, torch {env.get('torch')}, ComfyUI {env.get('comfyui')}, `{env.get('command')}`, "
            f"Dynamic VRAM {'on' if env.get('dynamic_vram') else 'off'}, {env.get('date')}")  # fmt: skip


def format_report(env: dict, jobs: list[dict]) -> str:
    """The environment line, the table, a line for each variant a family left out (with why),
    where a model was measured against bf16 eager that table under its title, and the ``--profile``
    table where there is one: what ``bench.server`` prints last and ``python -m bench.server_report``
    prints."""
    smoke = bool(env.get("cpu_smoke"))
    report = (f"{SMOKE_LINE}\n" if smoke else "") + f"{env_line(env)}\n\n{format_table(jobs, smoke)}\n"
    left_out = [f"{model_label(j)} {v}: {why}" for j in jobs for v, why in j.get("variants_left_out", {}).items()]
    report += "".join(f"\nNot run: {line}" for line in left_out) + ("\n" if left_out else "")
    against_bf16 = format_bf16_table(jobs)
    report += f"\n{BF16_TITLE}\n\n{against_bf16}\n" if against_bf16 else ""
    profiles = format_profiles(jobs)
    return report + (f"\n{PROFILE_TITLE}\n\n{profiles}\n" if profiles else "")


#: Title and columns of the ``--profile`` table.
PROFILE_HEAD = ["model", "res", "variant", "sampling s", "kernel s", "busy", "top kinds (s)", "costliest kernel",
                "cudaMalloc / cudaFree / syncs", "aten calls"]  # fmt: skip
PROFILE_TITLE = (
    "One more prompt per variant under torch.profiler inside the server (`--profile`; not in the timings above)"
)


def format_profiles(jobs: list[dict]) -> str:
    """A markdown table of the ``--profile`` prompts (``bench.server_profile.summary``), or ''."""
    lines: list[list[Any]] = [PROFILE_HEAD]
    for job in jobs:
        for p in job.get("profiles", []):
            if "error" in p:
                lines.append([model_label(job), p["size"], p["variant"], p["error"]] + ["-"] * (len(PROFILE_HEAD) - 4))
                continue
            kinds = ", ".join(f"{k} {v:.2f}" for k, v in sorted(p["split"].items(), key=lambda kv: -kv[1])[:3])
            top = p["top"][0] if p["top"] else None
            calls = p["runtime_calls"]
            syncs = calls["cudaStreamSynchronize"] + calls["cudaDeviceSynchronize"] + calls["cudaEventSynchronize"]
            lines.append([
                model_label(job), p["size"], p["variant"], _s(p["wall_s"]), _s(p["kernel_s"]), _s(p["busy"], 2),
                kinds or "-", f"{top['name'][:60]} {top['seconds']:.2f} s x{top['calls']}" if top else "-",
                f"{calls['cudaMalloc']} / {calls['cudaFree']} / {syncs}", p["aten_calls"],
            ])  # fmt: skip
    return render_markdown(lines) if len(lines) > 1 else ""


def format_prompts(job: dict) -> list[str]:
    """One line per prompt: wall, denoise, outside, sampler setup, memory, GPU clock, equality, eager reasons."""
    out = []
    for p in job.get("prompts", []):
        eager = "; eager: " + ", ".join(f"{n}x {r}" for r, n in p["eager"].items()) if p.get("eager") else ""
        equal = "" if p.get("bit_equal") is None else f", bit-equal {p['bit_equal']}"
        clock = "" if p.get("sm_clock_mhz") is None else f", SM {p['sm_clock_mhz']:.0f} MHz {p['power_w']:.0f} W"
        out.append(
            f"{model_label(job)} {p['size']} {p['variant']} #{p['index']} seed {p['seed']}: wall {_s(p['wall_s'])} s, denoise "
            f"{_s(p['denoise_s'])} s, outside {_s(p['outside_s'])} s, sampler setup {_s(p['sampler_setup_s'])} s, reserved "
            f"{_gib(p.get('reserved_mib'))} GiB, RSS {_gib(p.get('rss_mib'))} GiB{clock}{equal}{eager}"
        )
    return out


def main(paths: list[str]) -> int:
    jobs, envs = [], []
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        envs.append(data["env"])
        jobs += data["jobs"]
    if not jobs:
        return 1
    sys.stdout.write(format_report(envs[0], jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
