"""Print one table from several benchmark JSON files: ``python -m bench.table out/*.json``."""

import json
import sys

from .report import Row, format_host_profiles, format_kernel_split, format_table, format_warmup_costs


def model_label(family: str, env: dict) -> str:
    """``flux``, or ``flux comfy_quant_fp8`` for a run with another ``--weight-dtype``: one table may
    hold the same family in several weight formats."""
    weight_dtype = env.get("weight_dtype", "default")
    return family if weight_dtype == "default" else f"{family} {weight_dtype}"


def main(paths: list[str]) -> int:
    rows, envs = [], []
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        env = data["env"]
        envs.append(env)
        rows += [Row(**{**r, "family": model_label(r["family"], env)}) for r in data["rows"]]
    if not rows:
        return 1
    env = envs[0]
    sys.stdout.write(
        f"{env['gpu']}, torch {env['torch']}, ComfyUI {env['comfyui']}, comfy-kitchen {env['comfy_kitchen']}, {env['date']}\n"
    )
    sys.stdout.write(format_table(rows) + "\n")
    if any(r.kernel_split for r in rows):
        sys.stdout.write("GPU seconds per denoise by kernel kind\n" + format_kernel_split(rows) + "\n")
    if any(r.host_top is not None for r in rows):
        sys.stdout.write("Python side of one denoise (cProfile)\n" + format_host_profiles(rows) + "\n")
    for line in (line for env in envs for line in format_warmup_costs(env)):
        sys.stdout.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
