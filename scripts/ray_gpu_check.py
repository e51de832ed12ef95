"""The Ray runner against one stock ComfyUI server: per-prompt times with and without BCG.

    python scripts/ray_gpu_check.py OUT_DIR WORK_DIR

Run by ``scripts/gpu_suite.sh ray`` (which sets up ``$COMFYUI_PATH`` and puts ray on the path).
ComfyUI is started as users start it, ``python main.py`` with no flags (``--cpu`` only on a machine
without CUDA, a local check of the script), in a copy of ``$COMFYUI_PATH`` with the pack in its
custom_nodes and the e2e layer's synthetic Z-Image in its models folder (``BCG_E2E_DEPTH`` main
blocks, default 1; 30 is the real model's depth). Then ``scripts/bcg_ray.py --servers <it>`` runs
two job specs of ``RAY_PROMPTS`` seeds (default 20) at ``RAY_SIZE`` (512x512), ``RAY_STEPS`` steps
(8): the eager twin (the BCG nodes bypassed) first, then the workflow with BCG Apply and BCG Warmup
Capture (warm-up only, at that size). Each prompt's time is ComfyUI's own execution time from its
history (``run_seconds``: no queue wait); the first of each run is reported apart (it loads the
model, and for BCG captures). Writes ``OUT_DIR/ray_check.json`` (the per-prompt times, medians,
BCG's totals) and the runner's and the server's logs, prints one ``ray:`` summary line, and exits
non-zero when a run failed or (on CUDA) BCG did not replay every call after its first prompt.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))


def run_spec(e, server, work: Path, out: Path, name: str, workflow: dict, seeds: int) -> dict:
    """Run ``seeds`` prompts of ``workflow`` through scripts/bcg_ray.py; the results JSON."""
    (work / f"{name}_workflow.json").write_text(json.dumps(workflow))
    spec = work / f"{name}.json"
    spec.write_text(json.dumps({"workflow": f"{name}_workflow.json", "seeds": seeds, "seed_start": 1000}))
    results = work / f"{name}_results.json"
    cmd = [sys.executable, str(ROOT / "scripts" / "bcg_ray.py"), "--job", str(spec), "--servers", server.url, "--out", str(results),
           "--in-flight", "2", "--timeout", "900"]  # fmt: skip
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "PYTHONUNBUFFERED": "1"}
    with open(out / f"ray_{name}.log", "w") as log:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, timeout=1800).returncode
    doc = json.loads(results.read_text()) if results.is_file() else {}
    return {"rc": rc, **doc}


def times(doc: dict) -> dict:
    """Per-prompt execution seconds in job order; the first apart, the median of the rest."""
    runs = [j.get("run_seconds") for j in doc.get("jobs", []) if j.get("status") == "done"]
    rest = [t for t in runs[1:] if t is not None]
    return {"per_prompt": runs, "first": runs[0] if runs else None, "median_rest": round(statistics.median(rest), 4) if rest else None,
            "mean_rest": round(statistics.fmean(rest), 4) if rest else None}  # fmt: skip


def main(argv: list[str]) -> int:
    out, work = Path(argv[0]), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    prompts, steps = int(os.environ.get("RAY_PROMPTS", "20")), int(os.environ.get("RAY_STEPS", "8"))
    w, _, h = os.environ.get("RAY_SIZE", "512x512").partition("x")
    size = (int(w), int(h))
    base = work / "ComfyUI"
    shutil.copytree(os.environ["COMFYUI_PATH"], base, symlinks=True)  # the check writes models and outputs into it
    os.environ["COMFYUI_PATH"] = str(base)
    import e2e_setup as e

    t0 = time.monotonic()
    e.make_base(base)
    record: dict = {"command": "python main.py", "depth": e.DEPTH, "size": list(size), "steps": steps, "prompts": prompts,
                    "model_build_seconds": round(time.monotonic() - t0, 1)}  # fmt: skip
    from bench.comfy_server import TEST_ONLY_ENV

    server = e.ComfyServer(base, env=dict.fromkeys(TEST_ONLY_ENV), bare=True, log_path=out / "ray_check_server.log")
    ok = False
    try:
        server.start(timeout=300)
        record["device"] = e.load_client().http_json(server.url, "/system_stats")["devices"][0]["name"]
        bcg = e.latent_workflow(0, size=size, steps=steps, prefix="ray_check/bcg")
        eager = e.eager_twin(bcg, "ray_check/eager")
        for name, workflow in (("eager", eager), ("bcg", bcg)):
            doc = run_spec(e, server, work, out, name, workflow, prompts)
            record[name] = {"rc": doc["rc"], "done": doc.get("done"), "failed": doc.get("failed"), "replayed": doc.get("replayed"),
                            "calls": doc.get("calls"), "eager": doc.get("eager"), **times(doc)}  # fmt: skip
        b, a = record["bcg"], record["eager"]
        record["speedup_median"] = (
            round(a["median_rest"] / b["median_rest"], 3) if a["median_rest"] and b["median_rest"] else None
        )
        ok = all(r["rc"] == 0 and r["done"] == prompts for r in (a, b))
        if e.cuda_available():  # after its first prompt (warm-up and capture) BCG replays every call
            ok = ok and b["replayed"] >= (prompts - 1) * steps
    except Exception as exc:  # recorded; the check fails
        record["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        server.stop()
        (out / "ray_check.json").write_text(json.dumps(record, indent=1, default=str))
    if "error" in record:
        print(f"ray: FAILED: {record['error']}")
        return 1
    a, b = record["eager"], record["bcg"]
    print(f"ray: {'ok' if ok else 'FAILED'}: {record['device']}; Z-Image depth {record['depth']} {size[0]}x{size[1]} {steps} steps, "
          f"{prompts} prompts each through bcg_ray.py: eager first {a['first']}s, then median {a['median_rest']}s; "
          f"BCG first {b['first']}s, then median {b['median_rest']}s ({record['speedup_median']}x); "
          f"BCG replayed {b['replayed']}/{b['calls']} DiT calls")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
