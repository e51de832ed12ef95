"""The results JSON (its format is in ``bcg_client.cli``'s help), its closing report, and
``--resume``: which jobs a results file has done already, and the records to carry over untouched."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from .comfy_http import server_label
from .errors import ClientError
from .files import read_json
from .jobs import Job
from .status import totals_lines


def results_document(jobs: list[Job], per_server: dict[str, dict], meta: dict, kept: list[dict] = ()) -> dict:
    """The results JSON: ``meta``, the totals, "per_server" and "jobs" (the format is in
    ``bcg_client.cli``'s help). ``per_server``: {url: {"done", "failed", "lost", "replayed", "calls",
    "eager"}}, whose sums are the totals; ``kept``: records of the --resume file that are not jobs of
    this spec, carried over as they are."""
    replayed, eager = 0, Counter()
    for server in per_server.values():
        replayed, eager = replayed + server["replayed"], eager + Counter(server["eager"])
    counts = Counter(j.status for j in jobs)
    return {
        **meta,
        "prompts": len(jobs), "done": counts["done"], "failed": counts["failed"], "pending": counts["pending"] + counts["running"],
        "replayed": replayed, "calls": replayed + sum(eager.values()), "eager": dict(eager),
        "cached": sum(j.cached for j in jobs if not j.resumed),
        "images": [p for j in jobs for p in j.images],
        "per_server": per_server,
        "kept": len(kept),
        "jobs": [j.record() for j in jobs] + list(kept),
    }  # fmt: skip


def apply_resume(jobs: list[Job], path: Path) -> tuple[int, list[dict]]:
    """Mark the jobs that ``path`` (a results JSON) records as done: (how many were, the records
    that are not jobs of ``jobs``, e.g. of a spec since edited: they are kept in the results as they are)."""
    results = read_json(path, "--resume")
    records = results.get("jobs")
    if not isinstance(records, list) or not all(isinstance(r, dict) and "key" in r for r in records):
        raise ClientError(f'--resume {str(path)!r}: no "jobs" list; give a results JSON written by this client (--out)')
    done = {r["key"]: r for r in records if r.get("status") == "done"}
    keys = {job.key for job in jobs}
    kept = [r for r in records if r["key"] not in keys]
    count = 0
    for job in jobs:
        record = done.get(job.key)
        if record:
            job.status, job.resumed, count = "done", True, count + 1
            for name in ("server", "prompt_id", "seconds", "run_seconds", "cached", "outputs", "images", "attempts"):
                setattr(job, name, record.get(name, getattr(job, name)))
    return count, kept


def summary_lines(document: dict, jobs: list[Job], folder: Path | None) -> list[str]:
    """The closing report of a results document: per server, the totals, images, failures."""
    lines = []
    for url, server in document["per_server"].items():
        head = f"{server_label(url)}: {server['done']} done, {server['failed']} failed, {server['lost']} lost and resubmitted; BCG "
        if server.get("bcg_status_error"):
            lines.append(f"{head}totals unavailable: {server['bcg_status_error']}")
        else:
            lines += totals_lines("", server["replayed"], Counter(server["eager"]), head)
    ran = sum(server["done"] for server in document["per_server"].values())
    lines += totals_lines("", document["replayed"], Counter(document["eager"]), f"BCG over {ran} prompt(s): ")
    if document["cached"]:
        lines.append(f"  {document['cached']} of them served from ComfyUI's cache (nothing sampled, no DiT call)")
    if folder is not None:
        lines.append(f"{len(document['images'])} image(s) in {folder}")
    failed = [j for j in jobs if j.status == "failed"]
    if failed:  # their errors were printed as they failed (each once) and are in the results
        keys = ", ".join(j.key for j in failed[:10]) + (f" and {len(failed) - 10} more" if len(failed) > 10 else "")
        lines.append(f"{len(failed)} job(s) failed for good: {keys} (the errors are above)")
    return lines
