"""ComfyUI started exactly as users start it, `python main.py` with no flags, with the pack in its
custom_nodes: for each family, the example workflow with BCG, its eager twin (BCG nodes bypassed)
compared bit for bit, and what Dynamic VRAM's fixed-address twin costs.

    python scripts/noflags_check.py OUT_DIR WORK_DIR [family ...]     (default: zimage flux qwen_image)

Run by ``scripts/gpu_suite.sh noflags`` (which sets up ``$COMFYUI_PATH``). On a CPU machine (a
local check of the script) the server gets ``--cpu``, the only flag, and a family passes when every
call runs eager with the no-CUDA reason and equals eager. Writes
``OUT_DIR/noflags.json`` and ``OUT_DIR/noflags_server.log``, prints one ``ok:``/``FAILED:`` line
per family and exits non-zero when any family failed.

Per family, in this order on one server: eager (the dynamic model: its first load), BCG (the
fixed-address twin loads, the warm-up captures, the sampling replays), BCG again with a new seed
(must replay with no new capture), eager again with that seed. After each prompt: its wall time,
the server's resident memory (``VmRSS``) and the device memory PyTorch holds (``/system_stats``).
The twin's cost is BCG's first prompt against eager's first, and the memory it adds.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
DEFAULT_FAMILIES = ("zimage", "flux", "qwen_image")


def check_family(e, client, server, family: str) -> dict:
    """One family's four prompts (see the module docstring); ``ok`` says whether it passed."""
    rec: dict = {"family": family}

    def measured(name: str, prompt: dict):
        run = e.run_prompt(server, prompt, timeout=600)
        entry = client.wait(server.url, run.prompt_id, timeout=120)
        mem = e.gpu_memory(server)
        rec[name] = {
            "seconds": round(run.seconds, 2),
            "rss_mib": round(e.rss_mib(server.proc.pid)),
            "torch_reserved_mib": round(mem["reserved"] / 2**20),
            "torch_allocated_mib": round(mem["allocated"] / 2**20),
        }
        return run, e.saved_latent(server.base, entry)

    seed = 31
    bcg_prompt = e.latent_workflow(seed, prefix=f"noflags/{family}_bcg", family=family)
    _, eager = measured("eager_first", e.eager_twin(bcg_prompt, f"noflags/{family}_eager"))
    run, got = measured("bcg_first", bcg_prompt)
    rec["run"] = run.last_run
    session = e.session_by_id(client.bcg_status(server.url), run.events[-1]["id"])
    rec.update(warmup=session.get("last_warmup"), disabled=session.get("disabled"))
    captures = session.get("captures")
    rec["equal_to_eager"] = bool(got.shape == eager.shape and torch_equal(got, eager))
    again = e.latent_workflow(seed + 1, prefix=f"noflags/{family}_bcg2", family=family)
    run2, got2 = measured("bcg_second", again)
    rec["second_run"] = run2.last_run
    captures2 = e.session_by_id(client.bcg_status(server.url), run2.events[-1]["id"]).get("captures")
    _, eager2 = measured("eager_second", e.eager_twin(again, f"noflags/{family}_eager2"))
    rec["second_equal_to_eager"] = bool(got2.shape == eager2.shape and torch_equal(got2, eager2))
    rec["no_new_capture"] = captures is not None and captures == captures2
    if e.cuda_available():
        served = all(r["calls"] == e.STEPS and r["replayed"] == e.STEPS for r in (rec["run"], rec["second_run"]))
    else:  # a local check on a CPU: every call runs eager and says why
        served = all(r["calls"] == e.STEPS and sum(r["eager"].values()) == e.STEPS and all("no CUDA" in k for k in r["eager"])
                     for r in (rec["run"], rec["second_run"]))  # fmt: skip
    rec["ok"] = served and rec["equal_to_eager"] and rec["second_equal_to_eager"] and rec["no_new_capture"]
    return rec


def torch_equal(a, b) -> bool:
    import torch

    return torch.equal(a, b)


def summary(rec: dict) -> str:
    if "error" in rec:
        return f"FAILED: {rec['family']}: {rec['error']}"
    run, second = rec.get("run") or {}, rec.get("second_run") or {}
    eager = ", ".join(f"{n}x {r}" for r, n in {**(run.get("eager") or {}), **(second.get("eager") or {})}.items())
    cost = ""
    if "eager_first" in rec and "bcg_first" in rec:
        a, b = rec["eager_first"], rec["bcg_first"]
        cost = (
            f"; twin: first prompt {b['seconds']}s vs eager {a['seconds']}s, RSS {b['rss_mib'] - a['rss_mib']:+} MiB, "
            f"torch reserved {b['torch_reserved_mib'] - a['torch_reserved_mib']:+} MiB"
        )
    return (
        ("ok: " if rec.get("ok") else "FAILED: ")
        + f"{rec['family']}: replayed {run.get('replayed')}/{run.get('calls')} then "
        f"{second.get('replayed')}/{second.get('calls')}{'; eager: ' + eager if eager else ''}; equal to eager: "
        f"{rec.get('equal_to_eager')}/{rec.get('second_equal_to_eager')}; no new capture: {rec.get('no_new_capture')}{cost}"
    )


def main(argv: list[str]) -> int:
    out, work = Path(argv[0]), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    families = tuple(argv[2:]) or DEFAULT_FAMILIES
    shutil.rmtree(work, ignore_errors=True)
    base = work / "ComfyUI"
    shutil.copytree(os.environ["COMFYUI_PATH"], base, symlinks=True)  # the stage writes models and outputs into it
    os.environ["COMFYUI_PATH"] = str(base)
    import e2e_setup as e

    e.make_base(base, others=tuple(f for f in families if f != e.FAMILY))
    client = e.load_client()
    record: dict = {"command": "python main.py", "cwd": str(base), "families": []}
    # as users start it: nothing of the test environment (the opt-out of the allocator switch is
    # dropped by ComfyServer itself)
    from bench.comfy_server import TEST_ONLY_ENV

    server = e.ComfyServer(base, env=dict.fromkeys(TEST_ONLY_ENV), bare=True, log_path=out / "noflags_server.log")
    try:
        t0 = time.monotonic()
        server.start(timeout=300)
        record["start_seconds"] = round(time.monotonic() - t0, 1)
        log = server.log_path.read_text(errors="replace")
        device = client.http_json(server.url, "/system_stats")["devices"][0]["name"]
        record.update(
            device=device,
            cuda_malloc_async="cudaMallocAsync" in device,
            dynamic_vram="DynamicVRAM support detected and enabled" in log,
            bcg_log=[line.strip() for line in log.splitlines() if "[BCG]" in line][:20],
            import_failed=[line.strip() for line in log.splitlines() if "IMPORT FAILED" in line],
        )
        for family in families:
            try:
                rec = check_family(e, client, server, family)
            except Exception as exc:  # recorded; the family fails, the others still run
                rec = {"family": family, "error": f"{type(exc).__name__}: {exc}", "ok": False}
            record["families"].append(rec)
            print(summary(rec), flush=True)
    except Exception as exc:
        record["error"] = f"{type(exc).__name__}: {exc}"
        print(f"FAILED: {record['error']}", flush=True)
    finally:
        server.stop()
        (out / "noflags.json").write_text(json.dumps(record, indent=1, default=str))
    allocator = "cudaMallocAsync" if record.get("cuda_malloc_async") else "native allocator"
    print(f"server: {allocator}, Dynamic VRAM {'on' if record.get('dynamic_vram') else 'off'}")
    ok = (
        "error" not in record
        and len(record["families"]) == len(families)
        and all(r.get("ok") for r in record["families"])
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
