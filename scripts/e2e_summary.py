#!/usr/bin/env python3
"""Print the short summary of an e2e run from its ``e2e_summary.json`` (written by tests/e2e).

    python scripts/e2e_summary.py bench_out/e2e/e2e_summary.json

Soak: prompts, replayed/eager DiT calls against the plan's expectation, eager twins compared,
reserved GPU memory at start, peak and end (and the first pass's peak); then the /free and
/interrupt outcomes, and the two allocator servers' (a plain ``python main.py`` start, and one with
BCG_KEEP_CUDA_MALLOC_ASYNC=1). Standard library only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def mib(n) -> str:
    return f"{int(n) / 2**20:.0f} MiB" if isinstance(n, (int, float)) else "?"


def soak_lines(soak: dict) -> list[str]:
    totals = soak.get("totals") or {}
    eager = sum((totals.get("eager") or {}).values())
    expected_eager = sum((totals.get("expected_eager") or {}).values())
    done = len(soak.get("curve", []))
    lines = [
        f"soak: {done}/{soak.get('prompts')} prompts in {soak.get('seconds', '?')}s, {soak.get('steps')} steps each; "
        f"replayed {totals.get('replayed', '?')} (plan {totals.get('expected_replayed', '?')}), eager {eager} (plan {expected_eager})"
    ]
    for reason, n in sorted((totals.get("eager") or {}).items()):
        lines.append(f"  {n}x {reason}")
    memory = soak.get("memory") or {}
    if memory:
        lines.append(
            f"  reserved memory: start {mib(memory['reserved_start'])}, peak {mib(memory['reserved_peak'])}, "
            f"end {mib(memory['reserved_end'])} (first pass peak {mib(memory['reserved_first_pass_peak'])}, "
            f"after it max {mib(memory['reserved_after_first_pass_max'])}, tolerance {soak.get('reserved_tolerance_mib')} MiB)"
        )
        lines.append(
            f"  allocated: first pass max {mib(memory['allocated_first_pass_max'])}, "
            f"after it max {mib(memory['allocated_after_first_pass_max'])}, end {mib(memory['allocated_end'])}"
        )
    elif soak.get("curve"):
        reserved = [c["reserved"] for c in soak["curve"]]
        lines.append(
            f"  reserved memory (incomplete run): start {mib(reserved[0])}, peak {mib(max(reserved))}, end {mib(reserved[-1])}"
        )
    twins = soak.get("twins") or []
    if twins:
        lines.append(f"  eager twins: {sum(t['equal'] for t in twins)}/{len(twins)} bit-exact")
    return lines


def main(argv: list[str]) -> int:
    path = Path(argv[1] if len(argv) > 1 else "bench_out/e2e/e2e_summary.json")
    if not path.is_file():
        print(f"no {path}: the e2e tests did not run (see the skip reasons above)")
        return 1
    summary = json.loads(path.read_text())
    lines = soak_lines(summary["soak"]) if "soak" in summary else ["soak: did not run"]
    for name, record in (summary.get("weights_moved") or {}).items():
        lines.append(
            f"/free {name}: {record.get('outcome', 'cpu')}; run after: {record.get('after', {}).get('summary')}"
        )
    if "interrupt" in summary:
        i = summary["interrupt"]
        lines.append(f"/interrupt: stopped after {i['progress']} steps of {i['steps']}; run: {i['run'].get('summary')}")
    for key, title in (
        ("default_allocator", "plain start"),
        ("keep_cuda_malloc_async", "BCG_KEEP_CUDA_MALLOC_ASYNC=1"),
    ):
        if key in summary:
            d = summary[key]
            lines.append(
                f"{title} ({d.get('device')}): {(d.get('run') or {}).get('summary', 'no run')}; "
                f"equal to eager: {d.get('equal')}; [BCG] allocator log lines: {len(d.get('allocator_lines') or [])}"
            )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
