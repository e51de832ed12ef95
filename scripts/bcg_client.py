#!/usr/bin/env python3
"""Queue a BCG workflow on a running ComfyUI N times and report how many DiT calls replayed.

Submits N copies of an API-format workflow (in ComfyUI: Workflow > Export (API); default
example_workflows/bcg_api_example.json) through ``POST /prompt``. Copy i gets seed ``--seed + i``
and the i-th (cycled) entry of ``--prompts`` and ``--resolutions``. Each run is awaited on
``/history/<prompt_id>``, its images are downloaded through ``/view`` into ``--out``, and at the
end the difference of ``GET /bcg/status`` before and after is printed: DiT calls replayed as CUDA
graphs, and calls that ran eager (fallbacks) by reason.

Examples::

    python scripts/bcg_client.py -n 4
    python scripts/bcg_client.py --server http://127.0.0.1:8188 -n 6 --prompts "a red fox" \\
        "a lighthouse at night" --resolutions 1024x1024,768x1344 --out bcg_out
    python scripts/bcg_client.py --set 10.steps=4 --set 8.resolutions=1024x1024,768x1344

A resolution that BCG Warmup Capture did not capture runs eager and is reported as
"not captured: WxH ..."; list it in the warm-up node (``--set <id>.resolutions=...``) to replay it.
``--prompts`` changes the CLIPTextEncode feeding the KSampler's positive input; other ways of
making conditioning are left as they are. Standard library only.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections import Counter
from pathlib import Path

DEFAULT_WORKFLOW = Path(__file__).resolve().parents[1] / "example_workflows" / "bcg_api_example.json"
SAMPLERS = ("KSampler", "KSamplerAdvanced")
LATENTS = ("EmptySD3LatentImage", "EmptyLatentImage")


class ClientError(RuntimeError):
    """A prompt was refused or failed; the message says which and why."""


# ------------------------------------------------------------------------------------------ HTTP
def http_json(server: str, path: str, payload: dict | None = None, timeout: float = 30) -> dict:
    data = None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(server.rstrip("/") + path, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as e:
        body = e.read().decode(errors="replace")
        raise ClientError(f"{e.code} from {path}: {body[:2000]}") from None
    except urllib.error.URLError as e:
        raise ClientError(f"cannot reach ComfyUI at {server} ({e.reason}); start it or pass --server") from None


def queue(server: str, prompt: dict, client_id: str) -> str:
    """POST /prompt; the prompt id. Validation errors are raised with ComfyUI's node errors."""
    answer = http_json(server, "/prompt", {"prompt": prompt, "client_id": client_id})
    if answer.get("node_errors"):
        raise ClientError(f"prompt refused: {json.dumps(answer['node_errors'])[:2000]}")
    return answer["prompt_id"]


def wait(server: str, prompt_id: str, timeout: float = 600, poll: float = 0.5) -> dict:
    """Wait on /history/<prompt_id> until the prompt finished; its history entry."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        entry = http_json(server, f"/history/{prompt_id}").get(prompt_id)
        status = (entry or {}).get("status") or {}
        if status.get("completed"):
            return entry
        if status.get("status_str") == "error":
            errors = [m[1] for m in status.get("messages", []) if m[0] == "execution_error"]
            detail = "; ".join(f"node {e.get('node_id')} ({e.get('node_type')}): {e.get('exception_message', '').strip()}" for e in errors)
            raise ClientError(f"prompt {prompt_id} failed: {detail or status}")
        time.sleep(poll)
    raise ClientError(f"prompt {prompt_id} not finished after {timeout:.0f}s (raise --timeout, or check the server log)")


def download_images(server: str, entry: dict, out_dir: Path, prefix: str) -> list[Path]:
    """Fetch every image of a history entry through /view into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    saved = []
    for node_id, output in sorted(entry.get("outputs", {}).items()):
        for k, image in enumerate(output.get("images", [])):
            query = urllib.parse.urlencode({k2: image.get(k2, "") for k2 in ("filename", "subfolder", "type")})
            with urllib.request.urlopen(f"{server.rstrip('/')}/view?{query}", timeout=60) as response:
                data = response.read()
            path = out_dir / f"{prefix}_node{node_id}_{k}{Path(image['filename']).suffix or '.png'}"
            path.write_bytes(data)
            saved.append(path)
    return saved


def bcg_status(server: str) -> list[dict]:
    try:
        return http_json(server, "/bcg/status")["sessions"]
    except ClientError as e:
        if str(e).startswith("404"):
            raise ClientError("GET /bcg/status is 404: install the ComfyUI-BCG pack in this ComfyUI's custom_nodes and restart it") from None
        raise


# ------------------------------------------------------------------------------------- workflow
def _link_source(prompt: dict, value) -> str | None:
    return str(value[0]) if isinstance(value, list) and len(value) == 2 and str(value[0]) in prompt else None


def vary(workflow: dict, seed: int, text: str | None = None, resolution: tuple[int, int] | None = None) -> dict:
    """A copy of an API workflow with a new seed, positive prompt text and latent size."""
    prompt = copy.deepcopy(workflow)
    samplers = [n for n in prompt.values() if n.get("class_type") in SAMPLERS]
    if not samplers:
        raise ClientError(f"no {' or '.join(SAMPLERS)} in the workflow")
    for node in samplers:
        key = "noise_seed" if "noise_seed" in node["inputs"] else "seed"
        node["inputs"][key] = seed
        if text is not None:
            source = _link_source(prompt, node["inputs"].get("positive"))
            if source is None or prompt[source].get("class_type") != "CLIPTextEncode":
                raise ClientError("--prompts needs a CLIPTextEncode connected to the KSampler's positive input")
            prompt[source]["inputs"]["text"] = text
    if resolution is not None:
        latents = [n for n in prompt.values() if n.get("class_type") in LATENTS]
        if not latents:
            raise ClientError(f"--resolutions needs an {' or '.join(LATENTS)} node")
        for node in latents:
            node["inputs"]["width"], node["inputs"]["height"] = resolution
    return prompt


def apply_sets(workflow: dict, sets: list[str]) -> None:
    """``ID.INPUT=VALUE`` overrides (VALUE parsed as JSON when it can be, else a string)."""
    for item in sets:
        target, sep, raw = item.partition("=")
        node_id, dot, name = target.partition(".")
        if not (sep and dot) or node_id not in workflow:
            raise ClientError(f"--set {item!r}: expected NODE_ID.INPUT=VALUE with a node id of the workflow ({', '.join(workflow)})")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        workflow[node_id]["inputs"][name] = value


def parse_resolutions(text: str) -> list[tuple[int, int]]:
    out = []
    for item in text.replace(" ", "").split(","):
        if item:
            w, x, h = item.lower().partition("x")
            if not (x and w.isdigit() and h.isdigit()):
                raise ClientError(f"--resolutions: {item!r} is not WIDTHxHEIGHT (e.g. 1024x1024)")
            out.append((int(w), int(h)))
    return out


# ---------------------------------------------------------------------------------------- totals
def run_totals(before: list[dict], after: list[dict]) -> tuple[int, Counter]:
    """(replayed, eager by reason) of the runs between two /bcg/status answers."""
    base = {s["id"]: s for s in before}
    replayed, eager = 0, Counter()
    for s in after:
        old = base.get(s["id"], {"hits": 0, "misses": {}})
        replayed += s["hits"] - old["hits"]
        eager.update(Counter(s["misses"]) - Counter(old["misses"]))
    return replayed, eager


def run_line(sessions: list[dict], workflow: dict) -> str:
    """The last-run summary of the sessions this workflow's BCG nodes touched."""
    ids = set(workflow)
    runs = [s["last_run"]["summary"] for s in sessions if s.get("last_run") and ids & set(s.get("node_ids", []))]
    return runs[-1] if runs else "no BCG run (BCG Apply not in this workflow, or nothing sampled)"


# ------------------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--server", default="http://127.0.0.1:8188", help="ComfyUI address (default %(default)s)")
    parser.add_argument("--workflow", type=Path, default=DEFAULT_WORKFLOW, help="API-format workflow JSON (default: the pack's example)")
    parser.add_argument("-n", "--count", type=int, default=4, help="prompts to submit (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first prompt; prompt i uses seed+i")
    parser.add_argument("--prompts", nargs="+", help="positive prompt texts, cycled over the runs")
    parser.add_argument("--resolutions", help="WIDTHxHEIGHT list, comma separated, cycled over the runs")
    parser.add_argument("--set", action="append", default=[], metavar="ID.INPUT=VALUE", help="override a node input (repeatable)")
    parser.add_argument("--out", type=Path, default=Path("bcg_client_out"), help="folder for the images (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds to wait for each prompt (default %(default)s)")
    parser.add_argument("--json", type=Path, help="also write the totals as JSON to this file")
    args = parser.parse_args(argv)

    try:
        workflow = json.loads(args.workflow.read_text())
        apply_sets(workflow, args.set)
        resolutions = parse_resolutions(args.resolutions) if args.resolutions else [None]
        prompts = args.prompts or [None]
        client_id = uuid.uuid4().hex
        before = bcg_status(args.server)
        images = []
        for i in range(args.count):
            seed, text, res = args.seed + i, prompts[i % len(prompts)], resolutions[i % len(resolutions)]
            prompt = vary(workflow, seed, text, res)
            prompt_id = queue(args.server, prompt, client_id)
            entry = wait(args.server, prompt_id, args.timeout)
            saved = download_images(args.server, entry, args.out, f"{i:03d}_seed{seed}")
            images += saved
            size = f" {res[0]}x{res[1]}" if res else ""
            print(f"[{i + 1}/{args.count}] seed {seed}{size}: {len(saved)} image(s); BCG {run_line(bcg_status(args.server), workflow)}")
        replayed, eager = run_totals(before, bcg_status(args.server))
    except (ClientError, OSError, json.JSONDecodeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    calls = replayed + sum(eager.values())
    share = f" ({100 * replayed / calls:.0f}%)" if calls else ""
    print(f"BCG over {args.count} prompt(s): replayed {replayed}/{calls} DiT calls{share}; eager {sum(eager.values())}")
    for reason, n in eager.most_common():
        print(f"  {n}x {reason}")
    print(f"{len(images)} image(s) in {args.out}")
    if args.json:
        summary = {"prompts": args.count, "replayed": replayed, "calls": calls, "eager": dict(eager), "images": [str(p) for p in images]}
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
