#!/usr/bin/env python3
"""Run batches of prompts on one or several ComfyUI servers and report how many DiT calls BCG replayed.

Two ways to say what to run:

* a job spec (``--job spec.json``): the cross product prompts x seeds x sizes of one API-format
  workflow, spread over ``--servers`` (one ComfyUI per GPU); every job's outputs, prompt ids,
  retries and failures go to a results JSON (``--out``), and ``--resume results.json`` skips the
  jobs already done;
* quick runs without a spec: ``-n N`` copies of ``--workflow`` (default
  scripts/bcg_api_example.json, the API-format twin of the pack's template); copy i gets seed
  ``--seed + i`` and the i-th (cycled) entry of ``--prompts`` and ``--resolutions``, and its images
  are saved in ``--out`` (a folder).

Job spec (JSON; relative paths are relative to the spec's folder)::

    {
      "workflow": "../scripts/bcg_api_example.json",
      "prompts": ["a red fox in fresh snow", "a lighthouse at night"],
      "seeds": 4,
      "sizes": ["1024x1024", "768x1344"],
      "steps": 8,
      "cfg": 1.0,
      "nodes": {"text": "4", "latent": "9", "seed": "10", "sampler": "10"},
      "set": {"8.resolutions": "1024x1024,768x1344"}
    }

  workflow    API-format workflow (in ComfyUI: Workflow > Export (API)); the only required field
  prompts     positive prompt texts: a list, or a text file with one prompt per line (blank lines
              skipped); default: the workflow's own text
  seeds       a list of seeds, or a count N meaning seed_start .. seed_start+N-1 (seed_start
              defaults to 0); default: the workflow's own seed
  sizes       a list of "WIDTHxHEIGHT" (multiples of 8); default: the workflow's own size
  steps, cfg  optional overrides, set on the sampler node(s)
  nodes       optional node ids (a string or a list of strings) per role; found as without a spec
              when left out: sampler and seed = every KSampler / KSamplerAdvanced, text = the
              CLIPTextEncode on the sampler's positive input, latent = every EmptySD3LatentImage /
              EmptyLatentImage. A seed node needs a seed or noise_seed input, a latent node width
              and height, a text node text; steps/cfg go to the sampler nodes that have them
  set         optional {"NODE_ID.INPUT": value} overrides applied to every job (like --set)

Scheduling: each server keeps up to ``--in-flight`` prompts queued and takes the next job when one
finishes; its prompts are polled on ``/history/<prompt_id>`` and ``/queue`` (no websocket). A
server that stops answering is retried with backoff while the others keep going; its jobs go to
other servers after ``--lost-after`` seconds. A prompt that vanished from a server's queue and
history (the server restarted) or was interrupted is resubmitted to any live server, at most
``--retries`` times. A prompt that ComfyUI refuses or whose execution fails is failed for good.

Results JSON (``--out``; rewritten as the batch goes, so an interrupted run can be resumed): the
totals (prompts, done, failed, replayed, calls, eager, cached, images), "per_server" (done,
failed, lost, replayed, calls, eager) and "jobs": one record per job with key (s<seed>_<W>x<H>_<hash
of the prompt sent>), status (done / failed / pending), prompt, seed, width, height, server, prompt_id,
cached (ComfyUI served it from its cache: nothing sampled, so no BCG counts),
outputs (the server's file names), images (downloaded copies, with --images), attempts and error.
A --resume file's records of jobs that the spec no longer has (it was edited) are kept at the end
of "jobs" as they were ("kept" counts them); the totals are those of the spec's jobs.
Downloaded files are named by the client only: ``<index>_<key>_<node class>_n<node id>_<k>.png``
(ids cleaned to [A-Za-z0-9_-]), so a server cannot choose where they go. A results or image file
that cannot be written (unwritable path, a file where a folder should be, a full disk) stops the
batch at once, before any prompt when it is so from the start: a one-line error naming the path
and the fix, exit status 1; prompts still queued are taken off the servers.

At the end the DiT calls replayed as CUDA graphs and those that ran eager (by reason) are printed
per server and in total: the difference of GET /bcg/status between the start and the end of the
batch. The exit status is 1 if any job failed for good (or the input was bad), 0 otherwise.

Examples::

    python scripts/bcg_client.py -n 4
    python scripts/bcg_client.py --server http://127.0.0.1:8188 -n 6 --prompts "a red fox" \\
        "a lighthouse at night" --resolutions 1024x1024,768x1344 --out bcg_out
    python scripts/bcg_client.py --set 10.steps=4 --set 8.resolutions=1024x1024,768x1344
    python scripts/bcg_client.py --job spec.json --servers http://gpu0:8188,http://gpu1:8188 \\
        --out results.json --images images
    python scripts/bcg_client.py --job spec.json --servers ... --resume results.json

A resolution that BCG did not capture yet runs eager and is reported as "not captured: WxH ..." or
"first call, captured: ..."; list it in BCG Warmup Capture (``--set <id>.resolutions=...``) to
replay it from the first step. ``--prompts`` changes the CLIPTextEncode feeding the KSampler's
positive input; other ways of making conditioning are left as they are. Standard library only.
"""

from __future__ import annotations

import argparse
import copy
import errno
import hashlib
import http.client
import itertools
import json
import os
import re
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_WORKFLOW = Path(__file__).resolve().parent / "bcg_api_example.json"
DEFAULT_SERVER = "http://127.0.0.1:8188"
SAMPLERS = ("KSampler", "KSamplerAdvanced")
LATENTS = ("EmptySD3LatentImage", "EmptyLatentImage")
DOWN_CODES = (502, 503, 504)
MAX_SIDE = 16384
MAX_SEED = 0xFFFFFFFFFFFFFFFF


class ClientError(RuntimeError):
    """A prompt was refused or failed, or the input is bad; the message says which and the fix."""


class ServerDown(ClientError):
    """The server did not answer (refused, reset, timed out, 502-504): try it again later."""


class SpecError(ClientError):
    """A job spec field is bad; the message names the field and the fix."""


class WriteError(ClientError):
    """A results or image file could not be written; the batch stops (the message names the path and the fix)."""


def write_error(path: Path, e: OSError, what: str, option: str) -> WriteError:
    """A one-line WriteError for ``e`` raised while writing ``what`` at ``path`` (given by ``option``)."""
    where = e.filename or path
    if isinstance(e, (FileExistsError, NotADirectoryError)):
        fix = f"a file is where a folder should be on that path; remove it or give another {option}"
    elif isinstance(e, IsADirectoryError):
        fix = f"a folder is where the file should be; give {option} a file name"
    elif isinstance(e, PermissionError) or e.errno in (errno.EACCES, errno.EPERM):
        fix = f"no permission to write there; give {option} a folder you can write"
    elif e.errno == errno.ENOSPC or e.errno == getattr(errno, "EDQUOT", None):
        fix = f"the disk is full; free some space or give {option} a path on another disk"
    elif e.errno == errno.EROFS:
        fix = f"that file system is read-only; give {option} a writable path"
    else:
        fix = f"check that path, or give {option} another one"
    reason = (e.strerror or str(e) or type(e).__name__).replace("\n", " ")
    return WriteError(f"cannot write the {what} at {str(where)!r} ({reason}); {fix}")


# ------------------------------------------------------------------------------------------ HTTP
def comfy_error_text(body) -> str:
    """ComfyUI's error answer (``{"error": ..., "node_errors": ...}``, as JSON text or decoded) as one
    readable line: each node's errors once (ComfyUI repeats them in "error"), else the error itself.
    Anything else is returned as text, cut at 2000 characters."""
    try:
        answer = json.loads(body) if isinstance(body, (str, bytes)) else body
    except json.JSONDecodeError:
        answer = None
    if not isinstance(answer, dict) or not ("error" in answer or "node_errors" in answer):
        return (body if isinstance(body, str) else json.dumps(body) if answer is not None else str(body))[:2000]
    parts, missing = [], False
    node_errors = answer.get("node_errors")
    for node_id, node in sorted(node_errors.items()) if isinstance(node_errors, dict) else []:
        errors = node.get("errors") if isinstance(node, dict) else None
        for error in errors if isinstance(errors, list) else [node]:
            error = error if isinstance(error, dict) else {"message": str(error)}
            text = ": ".join(str(error[k]).strip() for k in ("message", "details") if error.get(k))
            part = f"node {node_id} ({node.get('class_type', '?') if isinstance(node, dict) else '?'}): {text or 'invalid'}"
            if part not in parts:
                parts.append(part)
            missing = missing or error.get("type") == "value_not_in_list"
    if not parts:
        error = answer.get("error")
        if isinstance(error, dict):
            parts.append(": ".join(str(error[k]).strip().replace("\n", "; ") for k in ("message", "details") if error.get(k)) or "refused")
        else:
            parts.append(str(error))
    hint = "; a file the workflow names (a model?) is not on that server: add it to its models folder or change the workflow" if missing else ""
    return ("; ".join(parts) + hint)[:2000]


def http_bytes(server: str, path: str, data: bytes | None = None, timeout: float = 30) -> bytes:
    """The body of ``server + path`` (POST when ``data`` is given).

    Raises ServerDown when the server does not answer or answers 502-504, ClientError on other
    HTTP errors (with the status and ComfyUI's message)."""
    request = urllib.request.Request(server.rstrip("/") + path, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.read()
    except urllib.error.HTTPError as e:
        body = e.read().decode(errors="replace")
        raise (ServerDown if e.code in DOWN_CODES else ClientError)(f"{e.code} from {path}: {comfy_error_text(body)}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
        reason = getattr(e, "reason", None) or str(e) or type(e).__name__
        raise ServerDown(f"cannot reach ComfyUI at {server} ({reason}); start it or pass --server / --servers") from None


def http_json(server: str, path: str, payload: dict | None = None, timeout: float = 30) -> dict:
    """GET (or POST ``payload`` to) ``server + path`` and decode the JSON answer; errors as http_bytes."""
    data = None if payload is None else json.dumps(payload).encode()
    body = http_bytes(server, path, data, timeout)
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        raise ClientError(f"{path} on {server} did not answer JSON: {body[:200]!r}") from None


def queue(server: str, prompt: dict, client_id: str, timeout: float = 30) -> str:
    """POST /prompt; the prompt id. Validation errors are raised with ComfyUI's node errors."""
    answer = http_json(server, "/prompt", {"prompt": prompt, "client_id": client_id}, timeout)
    if isinstance(answer, dict) and answer.get("node_errors"):
        raise ClientError(f"prompt refused: {comfy_error_text(answer)}")
    if not isinstance(answer, dict) or "prompt_id" not in answer:
        raise ClientError(f"POST /prompt on {server} answered without a prompt_id: {json.dumps(answer)[:200]}; is it ComfyUI?")
    return answer["prompt_id"]


def execution_error(prompt_id: str, status: dict) -> str:
    """A readable message for a history entry whose status_str is "error"."""
    errors = [m[1] for m in status.get("messages", []) if m[0] == "execution_error"]
    detail = "; ".join(f"node {e.get('node_id')} ({e.get('node_type')}): {e.get('exception_message', '').strip()}" for e in errors)
    return f"prompt {prompt_id} failed: {detail or status}"


def wait(server: str, prompt_id: str, timeout: float = 600, poll: float = 0.5) -> dict:
    """Wait on /history/<prompt_id> until the prompt finished; its history entry."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        entry = http_json(server, f"/history/{prompt_id}").get(prompt_id)
        status = (entry or {}).get("status") or {}
        if status.get("completed"):
            return entry
        if status.get("status_str") == "error":
            raise ClientError(execution_error(prompt_id, status))
        time.sleep(poll)
    raise ClientError(f"prompt {prompt_id} not finished after {timeout:.0f}s (raise --timeout, or check the server log)")


def output_files(entry: dict) -> list[dict]:
    """Every file a history entry's outputs name: ``{"node", "kind", "filename", "subfolder", "type"}``."""
    files = []
    for node_id, output in sorted(entry.get("outputs", {}).items()):
        for kind, items in sorted(output.items()):
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict) and "filename" in item:
                    files.append({"node": node_id, "kind": kind, **{k: item.get(k, "") for k in ("filename", "subfolder", "type")}})
    return files


# Saved files are named by the client only: [A-Za-z0-9_-] pieces joined by "_", one known suffix.
# Such a name has no separator, drive, ":" (NTFS streams), leading dot, trailing dot or space, and
# its stem is never a Windows device name, so it stays inside the folder on Linux, macOS and Windows.
NAME_PIECE = 40  # characters kept of a server-given piece (node id, class); a hash keeps it unique
FILE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".tif", ".tiff", ".exr", ".mp4", ".webm", ".mov",
                 ".wav", ".flac", ".mp3", ".ogg", ".glb")  # fmt: skip
WINDOWS_DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"{d}{i}" for d in ("COM", "LPT") for i in range(10))}


def name_piece(text, limit: int = NAME_PIECE) -> str:
    """``text`` as a file-name piece of [A-Za-z0-9_-]; a piece that had to change ends with a hash of it."""
    raw = str(text)
    clean = re.sub(r"[^A-Za-z0-9_-]+", "-", raw).strip("-") or "x"
    if clean != raw or len(clean) > limit:
        clean = f"{clean[:limit - 9]}-{hashlib.sha1(raw.encode()).hexdigest()[:8]}"
    return f"_{clean}" if clean.upper() in WINDOWS_DEVICES else clean


def image_name(stem: str, node_id, class_type, k: int, server_filename) -> str:
    """The file name of a job's ``k``-th image of node ``node_id``: ``<stem>_<class>_n<id>_<k><suffix>``.

    Only the suffix is taken from the server's file name, and only when it is a known one."""
    suffix = Path(str(server_filename).replace("\\", "/")).suffix.lower() or ".png"
    suffix = suffix if suffix in FILE_SUFFIXES else ".bin"
    return f"{name_piece(stem, 80)}_{name_piece(class_type or 'output')}_n{name_piece(node_id)}_{k}{suffix}"


def fetch_images(server: str, entry: dict, stem: str, prompt: dict | None = None) -> list[tuple[str, bytes]]:
    """(file name, bytes) of every image of a history entry, fetched through /view; ServerDown if it
    stops answering. The names are :func:`image_name`'s (the node's class from ``prompt``, the job's workflow)."""
    files, used = [], set()
    for node_id, output in sorted(entry.get("outputs", {}).items()):
        node = (prompt or {}).get(str(node_id))
        class_type = node.get("class_type") if isinstance(node, dict) else None
        images = output.get("images", []) if isinstance(output, dict) else []
        for k, image in enumerate(i for i in images if isinstance(i, dict)):
            query = urllib.parse.urlencode({k2: image.get(k2, "") for k2 in ("filename", "subfolder", "type")})
            data = http_bytes(server, f"/view?{query}", timeout=60)
            name = image_name(stem, node_id, class_type, k, image.get("filename", ""))
            while name in used:  # two ids that clean to the same piece
                name = f"{Path(name).stem}-{len(used)}{Path(name).suffix}"
            used.add(name)
            files.append((name, data))
    return files


def save_files(files: list[tuple[str, bytes]], out_dir: Path) -> list[Path]:
    """Write (name, bytes) pairs into ``out_dir`` (made if missing); an OSError is the caller's."""
    out_dir.mkdir(parents=True, exist_ok=True)
    saved = []
    for name, data in files:
        path = out_dir / name
        path.write_bytes(data)
        saved.append(path)
    return saved


def download_images(server: str, entry: dict, out_dir: Path, stem: str, prompt: dict | None = None) -> list[Path]:
    """Fetch every image of a history entry (see fetch_images) into ``out_dir``; an OSError is the caller's."""
    return save_files(fetch_images(server, entry, stem, prompt), out_dir)


def bcg_status(server: str, timeout: float = 30) -> list[dict]:
    """The sessions of GET /bcg/status; a 404 says to install the pack."""
    try:
        return http_json(server, "/bcg/status", timeout=timeout)["sessions"]
    except ServerDown:
        raise
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


def set_input(workflow: dict, target: str, value, where: str) -> None:
    """Set ``NODE_ID.INPUT`` of ``workflow`` to ``value``; ``where`` names the option in errors."""
    node_id, dot, name = target.partition(".")
    if not (dot and name) or node_id not in workflow:
        raise ClientError(f"{where}: expected NODE_ID.INPUT=VALUE with a node id of the workflow ({', '.join(workflow)})")
    workflow[node_id].setdefault("inputs", {})[name] = value


def apply_sets(workflow: dict, sets: list[str]) -> None:
    """``ID.INPUT=VALUE`` overrides (VALUE parsed as JSON when it can be, else a string)."""
    for item in sets:
        target, sep, raw = item.partition("=")
        if not sep:
            raise ClientError(f"--set {item!r}: expected NODE_ID.INPUT=VALUE with a node id of the workflow ({', '.join(workflow)})")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        set_input(workflow, target, value, f"--set {item!r}")


def parse_size(item: str, where: str) -> tuple[int, int]:
    """``"1024x768"`` -> (1024, 768); positive multiples of 8 up to 16384, else a SpecError naming ``where``."""
    w, x, h = item.strip().lower().replace(" ", "").partition("x")
    if not (x and w.isdigit() and h.isdigit()):
        raise SpecError(f"{where}: {item!r} is not WIDTHxHEIGHT (e.g. 1024x1024)")
    size = (int(w), int(h))
    for name, side in zip(("width", "height"), size):
        if not 8 <= side <= MAX_SIDE:
            raise SpecError(f"{where}: {item!r} has {name} {side}; sizes must be 8 to {MAX_SIDE}")
        if side % 8:
            raise SpecError(f"{where}: {item!r} has {name} {side}, not a multiple of 8 (the latent grid); use {side // 8 * 8 or 8} or {side // 8 * 8 + 8}")
    return size


def parse_resolutions(text: str) -> list[tuple[int, int]]:
    """The ``--resolutions`` list: WIDTHxHEIGHT items, comma separated."""
    out = []
    for item in text.replace(" ", "").split(","):
        if item:
            w, x, h = item.lower().partition("x")
            if not (x and w.isdigit() and h.isdigit()):
                raise ClientError(f"--resolutions: {item!r} is not WIDTHxHEIGHT (e.g. 1024x1024)")
            out.append((int(w), int(h)))
    return out


# ------------------------------------------------------------------------------------ job spec
SPEC_FIELDS = ("workflow", "prompts", "seeds", "seed_start", "sizes", "steps", "cfg", "nodes", "set")
ROLES = {  # role -> (the inputs a node of that role must have (any of), what it is)
    "text": (("text",), "CLIPTextEncode on the sampler's positive input"),
    "latent": (("width",), "EmptySD3LatentImage / EmptyLatentImage node"),
    "seed": (("seed", "noise_seed"), "KSampler / RandomNoise node with a seed"),
    "sampler": (("steps", "cfg"), "KSampler (or the nodes holding steps and cfg)"),
}


@dataclass
class Targets:
    """Node ids that each job edits, per role (see ROLES)."""

    text: list[str]
    latent: list[str]
    seed: list[str]
    sampler: list[str]


@dataclass
class Job:
    """One prompt to run. ``key`` names it in the results and image files; the same prompt gets
    the same key, so --resume recognises it. The rest is its state while the batch runs."""

    key: str
    prompt: dict
    seed: int | None = None
    text: str | None = None
    size: tuple[int, int] | None = None
    status: str = "pending"  # pending | running | done | failed
    server: str | None = None
    prompt_id: str | None = None
    submitted: float = 0.0
    seconds: float | None = None
    attempts: list[dict] = field(default_factory=list)
    outputs: list[dict] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    error: str | None = None
    resumed: bool = False
    index: int | None = None  # its place in the spec (None: the key starts with it, as without a spec)
    cached: bool = False  # done, and ComfyUI served it from its cache: no sampling, no DiT call

    @property
    def stem(self) -> str:
        """What its file names start with: ``<index>_<key>``."""
        return self.key if self.index is None else f"{self.index:03d}_{self.key}"

    def record(self) -> dict:
        """The job's entry in the results JSON."""
        w, h = self.size or (None, None)
        keys = ("key", "status", "seed", "server", "prompt_id", "seconds", "cached", "outputs", "images", "attempts", "error")
        return {**{k: getattr(self, k) for k in keys}, "prompt": self.text, "width": w, "height": h}


@dataclass
class JobSpec:
    """A parsed job spec: the jobs (prompts x seeds x sizes) and what they came from."""

    path: Path
    workflow_path: Path
    jobs: list[Job]
    shape: str  # "3 prompts x 2 seeds x 2 sizes"


def _ids(value, where: str) -> list[str]:
    ids = value if isinstance(value, list) else [value]
    if not ids or not all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in ids):
        raise SpecError(f"{where}: {value!r} is not a node id; give a node id of the workflow as a string (e.g. \"10\") or a list of them")
    return [str(i) for i in ids]


def _default_targets(workflow: dict) -> dict[str, list[str]]:
    """The nodes the client edits when the spec names none (as ``vary`` does)."""
    samplers = [i for i, n in workflow.items() if n.get("class_type") in SAMPLERS]
    texts = []
    for i in samplers:
        source = _link_source(workflow, workflow[i].get("inputs", {}).get("positive"))
        if source and workflow[source].get("class_type") == "CLIPTextEncode" and source not in texts:
            texts.append(source)
    latents = [i for i, n in workflow.items() if n.get("class_type") in LATENTS]
    return {"text": texts, "latent": latents, "seed": samplers, "sampler": samplers}


def find_targets(workflow: dict, nodes: dict | None, need: dict[str, str]) -> Targets:
    """The nodes to edit: ``nodes`` (the spec's "nodes" field) or the defaults.

    ``need`` maps each role the jobs use to the spec field that uses it (e.g. {"text": "prompts"});
    a needed role without a node, or a named node without the role's inputs, is a SpecError."""
    nodes = {} if nodes is None else nodes
    if not isinstance(nodes, dict) or set(nodes) - set(ROLES):
        raise SpecError(f"nodes: {json.dumps(nodes)[:200]} must be an object with keys among {', '.join(ROLES)} (each a node id)")
    found = _default_targets(workflow)
    for role, value in nodes.items():
        ids = _ids(value, f"nodes.{role}")
        inputs, what = ROLES[role]
        for i in ids:
            if i not in workflow:
                raise SpecError(f"nodes.{role}: node {i!r} is not in the workflow (its nodes: {', '.join(workflow)}); give the id of its {what}")
            if not set(inputs) & set(workflow[i].get("inputs", {})):
                kind = workflow[i].get("class_type", "?")
                raise SpecError(f"nodes.{role}: node {i!r} ({kind}) has no {' or '.join(inputs)} input; give the id of its {what}")
        found[role] = ids
    for role, used_by in need.items():
        if not found[role]:
            raise SpecError(f"{used_by}: the workflow has no {ROLES[role][1]} to set; give its id in nodes.{role}")
    return Targets(**found)


def apply_job(workflow: dict, targets: Targets, seed=None, text=None, size=None, steps=None, cfg=None) -> dict:
    """A copy of ``workflow`` with the given values set on the target nodes (None leaves a value as is)."""
    prompt = copy.deepcopy(workflow)
    for i in targets.seed if seed is not None else []:
        inputs = prompt[i]["inputs"]
        inputs["noise_seed" if "noise_seed" in inputs else "seed"] = seed
    for i in targets.text if text is not None else []:
        prompt[i]["inputs"]["text"] = text
    for i in targets.latent if size is not None else []:
        prompt[i]["inputs"]["width"], prompt[i]["inputs"]["height"] = size
    for name, value in (("steps", steps), ("cfg", cfg)):
        for i in targets.sampler if value is not None else []:
            if name in prompt[i]["inputs"]:
                prompt[i]["inputs"][name] = value
    return prompt


def job_key(prompt: dict, seed, size) -> str:
    """``s<seed>_<W>x<H>_<hash>``: readable, and equal exactly for equal prompts."""
    digest = hashlib.sha1(json.dumps(prompt, sort_keys=True).encode()).hexdigest()[:10]
    parts = ([f"s{seed}"] if seed is not None else []) + ([f"{size[0]}x{size[1]}"] if size else []) + [digest]
    return "_".join(parts)


def _number(spec: dict, name: str, kind, low, high, fix: str):
    """spec[name] as ``kind`` within [low, high], None when absent; a SpecError naming the field otherwise."""
    value = spec.get(name)
    if value is None:
        return None
    ok = isinstance(value, (int, float) if kind is float else int) and not isinstance(value, bool)
    if not ok or not low <= value <= high:
        raise SpecError(f"{name}: {value!r} is not {'a number' if kind is float else 'an integer'} from {low} to {high}; {fix}")
    return value


def _no_duplicates(items: list, name: str) -> None:
    seen = set()
    for item in items:
        if item in seen:
            raise SpecError(f"{name}: {item!r} is listed twice; remove one (each job must differ)")
        seen.add(item)


def parse_prompts(value, base: Path) -> list[str | None]:
    """The "prompts" field: a list of non-empty strings, or a text file (one prompt a line)."""
    if value is None:
        return [None]
    if isinstance(value, str):
        path = base / value
        try:
            prompts = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        except (OSError, UnicodeDecodeError) as e:
            raise SpecError(f"prompts: cannot read {str(path)!r} ({e.strerror if isinstance(e, OSError) else e}); give a list of "
                            "strings or a UTF-8 text file with one prompt per line (relative to the spec's folder)") from None  # fmt: skip
        if not prompts:
            raise SpecError(f"prompts: {str(path)!r} has no prompt; write one prompt per line")
    elif isinstance(value, list) and value and all(isinstance(p, str) and p.strip() for p in value):
        prompts = list(value)
    else:
        raise SpecError(f"prompts: {json.dumps(value)[:200]} must be a non-empty list of non-empty strings, or a text file with one prompt per line")
    _no_duplicates(prompts, "prompts")
    return prompts


def parse_seeds(value, start) -> list[int | None]:
    """The "seeds" field: a list of seeds, or a count N -> start .. start+N-1."""
    if value is None:
        return [None]
    fix = f"give a list of seeds (integers 0 to {MAX_SEED}) or a count (e.g. 4)"
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise SpecError(f"seeds: {value} is not a count of seeds; {fix}")
        start = 0 if start is None else start
        if start + value - 1 > MAX_SEED:
            raise SpecError(f"seed_start: {start} + {value} seeds passes {MAX_SEED}; lower seed_start")
        return list(range(start, start + value))
    if not isinstance(value, list) or not value:
        raise SpecError(f"seeds: {json.dumps(value)[:200]} is neither a list of seeds nor a count; {fix}")
    for seed in value:
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
            raise SpecError(f"seeds: {seed!r} is not a seed; {fix}")
    if start is not None:
        raise SpecError("seed_start: only with a count of seeds (\"seeds\": 4); remove it or give a count")
    _no_duplicates(value, "seeds")
    return list(value)


def parse_sizes(value) -> list[tuple[int, int] | None]:
    """The "sizes" field: a list of "WIDTHxHEIGHT" strings."""
    if value is None:
        return [None]
    if not isinstance(value, list) or not value or not all(isinstance(s, str) for s in value):
        raise SpecError(f"sizes: {json.dumps(value)[:200]} must be a non-empty list of \"WIDTHxHEIGHT\" strings (e.g. [\"1024x1024\"])")
    sizes = [parse_size(s, "sizes") for s in value]
    _no_duplicates(sizes, "sizes")
    return sizes


def read_json(path: Path, what: str) -> dict:
    """A JSON object from ``path``; a ClientError saying what is wrong and where."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ClientError(f"{what} {str(path)!r}: cannot read it ({e.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ClientError(f"{what} {str(path)!r} is not JSON ({e}); fix the file") from None
    if not isinstance(data, dict):
        raise ClientError(f"{what} {str(path)!r}: expected a JSON object, found {type(data).__name__}")
    return data


def load_workflow(path: Path, where: str) -> dict:
    """An API-format workflow; a UI-format one (with "nodes"/"links") gets the export hint."""
    workflow = read_json(path, where)
    if "nodes" in workflow and "links" in workflow:
        raise ClientError(f"{where} {str(path)!r} is a UI workflow; export the API format (Workflow > Export (API))")
    if not workflow or not all(isinstance(n, dict) and "class_type" in n and isinstance(n.get("inputs"), dict) for n in workflow.values()):
        raise ClientError(f"{where} {str(path)!r} is not an API-format workflow (each node needs class_type and inputs); "
                          "export it with Workflow > Export (API)")  # fmt: skip
    return workflow


def load_spec(path: Path, sets: list[str] = ()) -> JobSpec:
    """Parse and check a job spec (see the module docstring) into its jobs; ``sets`` are --set items.

    Every problem is a ClientError (SpecError for a field) whose message names the field and the fix."""
    spec = read_json(path, "job spec")
    unknown = sorted(set(spec) - set(SPEC_FIELDS))
    if unknown:
        raise SpecError(f"{unknown[0]}: not a job spec field; the fields are {', '.join(SPEC_FIELDS)}")
    if not isinstance(spec.get("workflow"), str):
        raise SpecError("workflow: missing; give the path of an API-format workflow JSON (relative to the spec's folder)")
    base = path.parent
    workflow_path = base / spec["workflow"]
    workflow = load_workflow(workflow_path, "workflow")
    apply_sets(workflow, list(sets))
    if not isinstance(spec.get("set", {}), dict):
        raise SpecError("set: must be an object {\"NODE_ID.INPUT\": value}")
    for target, value in spec.get("set", {}).items():
        set_input(workflow, target, value, f"set {target!r}")
    prompts = parse_prompts(spec.get("prompts"), base)
    start = _number(spec, "seed_start", int, 0, MAX_SEED, "give the first seed")
    seeds = parse_seeds(spec.get("seeds"), start)
    sizes = parse_sizes(spec.get("sizes"))
    steps = _number(spec, "steps", int, 1, 10000, "give the sampler's step count, e.g. 8")
    cfg = _number(spec, "cfg", float, 0, 100, "give the guidance scale, e.g. 1.0")
    need = {r: f for r, f, v in (("text", "prompts", prompts[0]), ("latent", "sizes", sizes[0]), ("seed", "seeds", seeds[0])) if v is not None}
    if steps is not None or cfg is not None:
        need["sampler"] = "steps" if steps is not None else "cfg"
    targets = find_targets(workflow, spec.get("nodes"), need)
    for name, value in (("steps", steps), ("cfg", cfg)):
        if value is not None and not any(name in workflow[i]["inputs"] for i in targets.sampler):
            raise SpecError(f"{name}: none of the sampler nodes ({', '.join(targets.sampler)}) has a {name} input; name the node that has it in nodes.sampler")
    jobs = []
    for index, (text, seed, size) in enumerate(itertools.product(prompts, seeds, sizes)):
        prompt = apply_job(workflow, targets, seed, text, size, steps, cfg)
        jobs.append(Job(job_key(prompt, seed, size), prompt, seed, text, size, index=index))
    shape = " x ".join(f"{len(v)} {n}" for n, v in (("prompts", prompts), ("seeds", seeds), ("sizes", sizes)) if v[0] is not None)
    return JobSpec(path, workflow_path, jobs, shape or "the workflow as is")


def legacy_jobs(workflow: dict, count: int, seed: int, prompts: list | None, resolutions: list | None) -> list[Job]:
    """The jobs of a run without a spec: copy i gets seed+i and the i-th (cycled) prompt and resolution."""
    prompts, resolutions = prompts or [None], resolutions or [None]
    jobs = []
    for i in range(count):
        text, res = prompts[i % len(prompts)], resolutions[i % len(resolutions)]
        jobs.append(Job(f"{i:03d}_seed{seed + i}", vary(workflow, seed + i, text, res), seed + i, text, res))
    return jobs


# ---------------------------------------------------------------------------------------- totals
def run_totals(before: list[dict], after: list[dict]) -> tuple[int, Counter]:
    """(replayed, eager by reason) of the runs between two /bcg/status answers.

    A session absent from ``before``, or whose counts went down (a restarted server), counts from zero."""
    base = {s["id"]: s for s in before}
    replayed, eager = 0, Counter()
    for s in after:
        old = base.get(s["id"], {"hits": 0, "misses": {}})
        if s["hits"] < old["hits"]:
            old = {"hits": 0, "misses": {}}
        replayed += s["hits"] - old["hits"]
        eager.update(Counter(s["misses"]) - Counter(old["misses"]))
    return replayed, eager


def served_from_cache(entry: dict, workflow: dict, sessions: list[dict]) -> bool:
    """Whether ComfyUI ran none of this prompt's sampling: its history's "execution_cached"
    message lists every KSampler and BCG node of ``workflow`` (as when the same prompt ran before).

    /bcg/status does not move for such a prompt, so its last run is an earlier prompt's; False when
    the history has no such message (nothing known)."""
    cached, seen = set(), False
    for message in (entry.get("status") or {}).get("messages") or []:
        if isinstance(message, list) and len(message) == 2 and message[0] == "execution_cached" and isinstance(message[1], dict):
            seen = True
            cached.update(str(n) for n in message[1].get("nodes") or [])
    bcg = {str(i) for s in sessions for i in s.get("node_ids", [])}
    nodes = {i for i, n in workflow.items() if n.get("class_type") in SAMPLERS or i in bcg}
    return seen and bool(nodes) and nodes <= cached


CACHED = "served from ComfyUI's cache (nothing sampled, no DiT call)"


def run_line(sessions: list[dict], workflow: dict) -> str:
    """The last-run summary of the sessions this workflow's BCG nodes touched."""
    ids = set(workflow)
    runs = [s["last_run"]["summary"] for s in sessions if s.get("last_run") and ids & set(s.get("node_ids", []))]
    return runs[-1] if runs else "no BCG run (BCG Apply not in this workflow, or nothing sampled)"


class StatusTracker:
    """One server's replayed/eager counts since the batch started.

    Each ``refresh`` adds the difference to the previous GET /bcg/status, so a server restart loses
    only what ran since the last refresh (the client refreshes after every finished job)."""

    def __init__(self, url: str):
        self.url, self.base, self.sessions = url, None, []
        self.replayed, self.eager, self.error = 0, Counter(), None

    def refresh(self, timeout: float = 30) -> None:
        """Take a snapshot; ServerDown propagates, any other error is kept in ``error``."""
        try:
            sessions = bcg_status(self.url, timeout)
        except ServerDown:
            raise
        except (ClientError, KeyError, TypeError) as e:
            self.error = str(e) if isinstance(e, ClientError) else f"GET /bcg/status answered without sessions ({e!r})"
            return
        if self.base is not None:  # new objects, not in-place updates: other threads read them
            replayed, eager = run_totals(self.base, sessions)
            self.replayed, self.eager = self.replayed + replayed, self.eager + eager
        self.base = self.sessions = sessions
        self.error = None

    def totals(self) -> dict:
        """{"replayed", "calls", "eager"} (and "bcg_status_error" when the route failed)."""
        out = {"replayed": self.replayed, "calls": self.replayed + sum(self.eager.values()), "eager": dict(self.eager)}
        return {**out, "bcg_status_error": self.error} if self.error else out


# ------------------------------------------------------------------------------------- batching
@dataclass
class BatchConfig:
    """How a batch runs (the CLI options of the same names)."""

    in_flight: int = 2  # prompts queued per server
    retries: int = 3  # resubmissions of a lost job
    timeout: float = 600.0  # a job's seconds on a server; also how long all servers may be down
    lost_after: float = 30.0  # a down server's jobs go elsewhere after this many seconds
    poll: float = 0.5
    backoff: tuple[float, float] = (1.0, 30.0)  # first and largest wait between probes of a down server
    http_timeout: float = 30.0
    images: Path | None = None  # download images here
    images_option: str = "--images"  # the option that gave ``images`` (for error messages)
    client_id: str = field(default_factory=lambda: uuid.uuid4().hex)


def server_label(url: str) -> str:
    """host:port of a server URL, for progress lines."""
    return urllib.parse.urlparse(url).netloc or url


class ServerWorker:
    """One server's thread: keeps ``in_flight`` prompts queued, polls them, recovers when it is down.

    Shared state (jobs, the pending queue, counts) is only changed through the Batch, under its lock."""

    def __init__(self, url: str, batch: Batch):
        self.url, self.label, self.batch = url, server_label(url), batch
        self.in_flight: dict[str, Job] = {}
        self.down_since: float | None = None
        self.next_probe, self.delay = 0.0, batch.config.backoff[0]
        self.done = self.failed = self.lost = 0
        self.status = StatusTracker(url)
        self.thread = threading.Thread(target=self._loop, daemon=True, name=f"bcg-client {self.label}")

    # -- loop
    def _loop(self) -> None:
        """Run until the batch stops; a ServerDown anywhere marks the server down.

        Any other error also marks it down (with the error as the reason), so that its jobs move
        on after lost_after instead of the batch waiting for a dead thread."""
        config, first = self.batch.config, True
        while not self.batch.stop.is_set():
            pause = config.poll
            try:
                if first:
                    first = False
                    self.status.refresh(config.http_timeout)  # the baseline of the totals
                if self.down_since is not None:
                    pause = self._while_down()
                else:
                    self._poll_in_flight()
                    self._submit()
            except ServerDown as e:
                self._mark_down(str(e))
            except Exception as e:  # noqa: BLE001 - a worker thread must not die silently
                self._mark_down(f"client error {e!r}")
            self.batch.stop.wait(pause)

    def _mark_down(self, reason: str) -> None:
        now = time.monotonic()
        if self.down_since is None:
            self.down_since, self.delay = now, self.batch.config.backoff[0]
            held = f"; its {len(self.in_flight)} job(s) move to other servers in {self.batch.config.lost_after:g}s" if self.in_flight else ""
            self.batch.report(f"{self.label}: not answering ({reason}){held}; retrying with backoff")
        else:
            self.delay = min(self.delay * 2, self.batch.config.backoff[1])
        self.next_probe = now + self.delay

    def _while_down(self) -> float:
        """Release held jobs after lost_after, probe when due; the seconds to pause."""
        now = time.monotonic()
        if self.in_flight and now - self.down_since >= self.batch.config.lost_after:
            for job in self.in_flight.values():
                self.batch.lost(job, self, f"{self.label} did not answer for {now - self.down_since:.1f}s")
            self.in_flight.clear()
        if now < self.next_probe:
            return min(self.batch.config.poll, self.next_probe - now)
        http_json(self.url, "/queue", timeout=self.batch.config.http_timeout)
        self.batch.report(f"{self.label}: answering again after {now - self.down_since:.1f}s")
        self.down_since = None
        self.status.refresh(self.batch.config.http_timeout)
        return 0.0

    # -- work
    def _submit(self) -> None:
        while len(self.in_flight) < self.batch.config.in_flight:
            job = self.batch.take()
            if job is None:
                return
            try:
                prompt_id = queue(self.url, job.prompt, self.batch.config.client_id, self.batch.config.http_timeout)
            except ClientError as e:
                if isinstance(e, ServerDown):
                    self.batch.put_back(job)
                    raise
                self.batch.fail(job, self, f"refused by {self.label}: {e}")
                continue
            except BaseException:
                self.batch.put_back(job)
                raise
            self.batch.submitted(job, self, prompt_id)
            self.in_flight[prompt_id] = job

    def _poll_in_flight(self) -> None:
        """Settle every in-flight prompt that finished, failed or vanished."""
        if not self.in_flight:
            return
        timeout = self.batch.config.http_timeout
        answer = http_json(self.url, "/queue", timeout=timeout)  # read before the histories: see _unfinished
        queued = {str(item[1]) for key in ("queue_running", "queue_pending") for item in answer.get(key, []) if len(item) > 1}
        for prompt_id, job in list(self.in_flight.items()):
            entry = http_json(self.url, f"/history/{prompt_id}", timeout=timeout).get(prompt_id)
            if entry is None:
                self._unfinished(prompt_id, job, queued)
            else:
                self._finished(prompt_id, job, entry)

    def _unfinished(self, prompt_id: str, job: Job, queued: set[str]) -> None:
        """A prompt not in the history: still queued (unless too long), else it vanished.

        The queue was read before the history, and ComfyUI moves a finished prompt from the queue to
        the history in one step (under one lock), so a prompt in neither is gone (the server restarted)."""
        if prompt_id not in queued:
            del self.in_flight[prompt_id]
            self.batch.lost(job, self, f"prompt {prompt_id} vanished from {self.label}'s queue and history (restarted?)")
        elif time.monotonic() - job.submitted > self.batch.config.timeout:
            del self.in_flight[prompt_id]
            try:  # best effort: take it out of that queue so it does not run twice
                http_json(self.url, "/queue", {"delete": [prompt_id]}, timeout=self.batch.config.http_timeout)
            except ClientError:
                pass
            self.batch.lost(job, self, f"not finished on {self.label} after {self.batch.config.timeout:g}s (raise --timeout for long jobs)")

    def _finished(self, prompt_id: str, job: Job, entry: dict) -> None:
        status = entry.get("status") or {}
        if status.get("status_str") == "error":
            del self.in_flight[prompt_id]
            if any(m[0] == "execution_interrupted" for m in status.get("messages", [])):
                self.batch.lost(job, self, f"prompt {prompt_id} was interrupted on {self.label}")
            else:
                self.batch.fail(job, self, f"{self.label}: {execution_error(prompt_id, status)}")
            return
        if status and not status.get("completed"):
            return
        images = []
        if self.batch.config.images is not None:  # before "done": a server lost mid-download reruns the job
            try:
                images = [str(p) for p in download_images(self.url, entry, self.batch.config.images, job.stem, job.prompt)]
            except OSError as e:  # network errors are ServerDown; this one is local: no later job could save either
                del self.in_flight[prompt_id]
                self.batch.abort(write_error(self.batch.config.images, e, "images", self.batch.config.images_option))
                return
        del self.in_flight[prompt_id]
        cached = served_from_cache(entry, job.prompt, self.status.sessions)
        self.batch.done(job, self, output_files(entry), images, cached)
        try:
            self.status.refresh(self.batch.config.http_timeout)
        finally:
            self.batch.report_done(job, self)


class Batch:
    """Runs jobs on servers (one ServerWorker thread each) until every job is done or failed.

    ``report(line)`` receives the progress lines; ``on_change()`` is called (under the lock) after
    every change of a job's state, e.g. to save the results. Every job's state changes only here."""

    def __init__(self, jobs: list[Job], servers: list[str], config: BatchConfig, report=None, on_change=None):
        self.jobs, self.config = jobs, config
        self._report, self.on_change = report or (lambda line: None), on_change or (lambda: None)
        self.lock = threading.RLock()
        self.stop = threading.Event()
        self.pending = deque(j for j in jobs if j.status == "pending")
        self.total = len(self.pending)
        self.settled = 0
        self.workers = [ServerWorker(url, self) for url in servers]
        self.started = time.monotonic()
        self.fatal: WriteError | None = None  # a local write failed: the batch stopped (see abort)
        self.errors: dict[str, str] = {}  # each error a job failed with -> the first job it was printed for

    def abort(self, error: WriteError) -> None:
        """Stop the batch for good (a results or image file cannot be written): no job is submitted
        after this, the workers stop, and run() takes the prompts still queued off the servers."""
        with self.lock:
            if self.fatal is None:
                self.fatal = error
            self.stop.set()

    def _changed(self) -> None:
        """on_change(), whose write failure aborts the batch instead of reaching a worker's loop."""
        if self.fatal is not None:
            return
        try:
            self.on_change()
        except WriteError as e:
            self.abort(e)
        except OSError as e:
            self.abort(write_error(Path("."), e, "results", "--out"))

    # -- running
    def run(self) -> None:
        """Start the workers and wait until every job settled (or no server answered for --timeout)."""
        for worker in self.workers:
            worker.thread.start()
        try:
            while not self.stop.wait(self.config.poll):
                with self.lock:
                    if self.settled >= self.total:
                        break
                    self._give_up_if_all_down()
        finally:
            self.stop.set()
            for worker in self.workers:
                worker.thread.join()
            if self.fatal is not None:
                self._unqueue()
            with self.lock:  # interrupted: what ran nowhere is pending again, for --resume
                for job in self.jobs:
                    if job.status == "running":
                        job.status = "pending"
        for worker in self.workers:
            if worker.down_since is None:
                try:
                    worker.status.refresh(self.config.http_timeout)
                except ServerDown:
                    pass

    def _unqueue(self) -> None:
        """Best effort: take the prompts still waiting in the servers' queues off them (the one
        running finishes; its job stays pending, for --resume)."""
        for worker in self.workers:
            if worker.in_flight and worker.down_since is None:
                try:
                    http_json(worker.url, "/queue", {"delete": list(worker.in_flight)}, timeout=self.config.http_timeout)
                except ClientError:
                    pass

    def _give_up_if_all_down(self) -> None:
        downs = [w.down_since for w in self.workers]
        if all(d is not None for d in downs) and time.monotonic() - max(downs) >= self.config.timeout:
            error, failed = f"no server answered for {self.config.timeout:g}s; start them (or raise --timeout)", 0
            for job in self.jobs:
                if job.status in ("pending", "running"):
                    self._settle(job, None, "failed", error)
                    self.errors.setdefault(error, job.key)
                    failed += 1
            if failed:
                self.report(f"[{self.settled}/{self.total}] {failed} job(s) FAILED: {error}")
            self.pending.clear()

    # -- job state (each method ignores a job that has settled already)
    def take(self) -> Job | None:
        """The next pending job, marked running; None when there is none."""
        with self.lock:
            if not self.pending or self.stop.is_set():
                return None
            job = self.pending.popleft()
            job.status = "running"
            return job

    def put_back(self, job: Job) -> None:
        """A job whose submission did not reach the server: first in line again, no attempt used."""
        with self.lock:
            if job.status == "running":
                job.status = "pending"
                self.pending.appendleft(job)

    def submitted(self, job: Job, worker: ServerWorker, prompt_id: str) -> None:
        with self.lock:
            job.server, job.prompt_id, job.submitted = worker.url, prompt_id, time.monotonic()
            job.attempts.append({"server": worker.url, "prompt_id": prompt_id})
            self._changed()

    def done(self, job: Job, worker: ServerWorker, outputs: list[dict], images: list[str], cached: bool = False) -> None:
        with self.lock:
            if job.status == "running":
                job.outputs, job.images, job.cached = outputs, images, cached
                job.seconds = round(time.monotonic() - job.submitted, 3)
                job.attempts[-1]["result"] = "done"
                self._settle(job, worker, "done")

    def fail(self, job: Job, worker: ServerWorker, error: str) -> None:
        """Failed for good (refused, or its execution failed)."""
        with self.lock:
            if job.status == "running":
                if job.attempts and "result" not in job.attempts[-1]:
                    job.attempts[-1]["result"] = error
                self._settle(job, worker, "failed", error)
                self._report_failure(job, error)

    def lost(self, job: Job, worker: ServerWorker, reason: str) -> None:
        """The job's prompt is gone or stuck: resubmit it, or fail it after ``retries`` resubmissions."""
        with self.lock:
            if job.status != "running":
                return
            job.attempts[-1]["result"] = reason
            worker.lost += 1
            if len(job.attempts) > self.config.retries:
                error = f"lost {len(job.attempts)} times (limit: --retries {self.config.retries}); last: {reason}"
                self._settle(job, worker, "failed", error)
                self._report_failure(job, error)
                return
            job.status = "pending"
            self.pending.appendleft(job)
            self._changed()
            self.report(f"{job.key}: {reason}; resubmitting (attempt {len(job.attempts) + 1} of {self.config.retries + 1})")

    def _report_failure(self, job: Job, error: str) -> None:
        """``[n/total] key FAILED: error``, the error only the first time it is seen."""
        first = self.errors.setdefault(error, job.key)
        said = error if first == job.key else f"the same error as {first} (above)"
        self.report(f"[{self.settled}/{self.total}] {job.key} FAILED: {said}")

    def _settle(self, job: Job, worker: ServerWorker | None, status: str, error: str | None = None) -> None:
        job.status, job.error = status, error
        self.settled += 1
        if worker is not None:
            worker.done += status == "done"
            worker.failed += status == "failed"
        self._changed()

    # -- progress
    def report(self, line: str) -> None:
        with self.lock:
            self._report(line)

    def report_done(self, job: Job, worker: ServerWorker) -> None:
        """``[done/total] key on server (s): outputs; BCG last run | per server | rate``."""
        with self.lock:
            minutes = (time.monotonic() - self.started) / 60
            rate = self.settled / minutes if minutes > 0 else 0.0
            left = self.total - self.settled
            seconds = 60 * left / rate if rate and left else 0
            eta = f", {seconds:.0f}s left" if 0 < seconds < 120 else f", {seconds / 60:.0f} min left" if seconds else ""
            servers = ", ".join(f"{w.label} {w.done} done {len(w.in_flight)} queued" + (" DOWN" if w.down_since is not None else "")
                                for w in self.workers)  # fmt: skip
            if job.cached:
                bcg = CACHED
            else:
                bcg = run_line(worker.status.sessions, job.prompt) if worker.status.base is not None else "totals unavailable"
            self.report(f"[{self.settled}/{self.total}] {job.key} on {worker.label} ({job.seconds:.1f}s): "
                        f"{len(job.outputs)} output(s); BCG {bcg} | {servers} | {rate:.1f} jobs/min{eta}")  # fmt: skip


# ---------------------------------------------------------------------------------------- results
def results_document(batch: Batch, meta: dict, kept: list[dict] = ()) -> dict:
    """The results JSON: ``meta``, the totals, "per_server" and "jobs" (see the module docstring);
    ``kept``: records of the --resume file that are not jobs of this spec, carried over as they are."""
    per_server, replayed, eager = {}, 0, Counter()
    for w in batch.workers:
        totals = w.status.totals()
        per_server[w.url] = {"done": w.done, "failed": w.failed, "lost": w.lost, **totals}
        replayed, eager = replayed + w.status.replayed, eager + w.status.eager
    counts = Counter(j.status for j in batch.jobs)
    return {
        **meta,
        "prompts": len(batch.jobs), "done": counts["done"], "failed": counts["failed"], "pending": counts["pending"] + counts["running"],
        "replayed": replayed, "calls": replayed + sum(eager.values()), "eager": dict(eager),
        "cached": sum(j.cached for j in batch.jobs if not j.resumed),
        "images": [p for j in batch.jobs for p in j.images],
        "per_server": per_server,
        "kept": len(kept),
        "jobs": [j.record() for j in batch.jobs] + list(kept),
    }  # fmt: skip


def write_json(path: Path, data: dict) -> None:
    """Write ``data`` atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    os.replace(tmp, path)


def apply_resume(jobs: list[Job], path: Path) -> tuple[int, list[dict]]:
    """Mark the jobs that ``path`` (a results JSON) records as done: (how many were, the records
    that are not jobs of ``jobs``, e.g. of a spec since edited: they are kept in the results as they are)."""
    results = read_json(path, "--resume")
    records = results.get("jobs")
    if not isinstance(records, list) or not all(isinstance(r, dict) and "key" in r for r in records):
        raise ClientError(f"--resume {str(path)!r}: no \"jobs\" list; give a results JSON written by this client (--out)")
    done = {r["key"]: r for r in records if r.get("status") == "done"}
    keys = {job.key for job in jobs}
    kept = [r for r in records if r["key"] not in keys]
    count = 0
    for job in jobs:
        record = done.get(job.key)
        if record:
            job.status, job.resumed, count = "done", True, count + 1
            for name in ("server", "prompt_id", "seconds", "cached", "outputs", "images", "attempts"):
                setattr(job, name, record.get(name, getattr(job, name)))
    return count, kept


# ------------------------------------------------------------------------------------------ CLI
def parse_servers(text: str) -> list[str]:
    """``URL1,URL2`` -> URLs (``host:port`` gets http://); duplicates and non-URLs are errors."""
    servers = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        url = item if "://" in item else f"http://{item}"
        parsed = urllib.parse.urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ClientError(f"--servers: {item!r} is not a server URL (e.g. http://127.0.0.1:8188)")
        if url.rstrip("/") in servers:
            raise ClientError(f"--servers: {item!r} is listed twice; list each server once")
        servers.append(url.rstrip("/"))
    if not servers:
        raise ClientError("--servers: empty; give URL1,URL2,... (e.g. http://127.0.0.1:8188,http://127.0.0.1:8189)")
    return servers


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a{'n integer' if kind is int else ' number'}") from None
        if value < 0 or (value == 0 and kind is float):
            raise argparse.ArgumentTypeError(f"{text!r} must be {'0 or more' if kind is int else 'above 0'}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    """The CLI (the module docstring is its description and epilog)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--job", type=Path, metavar="SPEC", help="job spec JSON (format below): run prompts x seeds x sizes")
    parser.add_argument("--server", default=DEFAULT_SERVER, help="ComfyUI address (default %(default)s)")
    parser.add_argument("--servers", metavar="URL1,URL2", help="several ComfyUI servers (one per GPU); the jobs are spread over them")
    parser.add_argument("--workflow", type=Path, help="without --job: API-format workflow JSON (default: the pack's example)")
    parser.add_argument("-n", "--count", type=_positive(int), help="without --job: prompts to submit (default 4)")
    parser.add_argument("--seed", type=int, help="without --job: seed of the first prompt; prompt i uses seed+i (default 0)")
    parser.add_argument("--prompts", nargs="+", help="without --job: positive prompt texts, cycled over the runs")
    parser.add_argument("--resolutions", help="without --job: WIDTHxHEIGHT list, comma separated, cycled over the runs")
    parser.add_argument("--set", action="append", default=[], metavar="ID.INPUT=VALUE", help="override a node input (repeatable)")
    parser.add_argument("--out", type=Path, help="with --job: the results JSON (default: the --resume file, else bcg_results.json); "
                                                 "without: the folder for the images (default bcg_client_out)")  # fmt: skip
    parser.add_argument("--images", type=Path, metavar="DIR", help="with --job: also download the images into DIR")
    parser.add_argument("--resume", type=Path, metavar="RESULTS", help="with --job: skip the jobs this results JSON has done")
    parser.add_argument("--in-flight", type=_positive(int), default=2, help="prompts queued per server (default %(default)s)")
    parser.add_argument("--retries", type=_positive(int), default=3, help="resubmissions of a lost job (default %(default)s)")
    parser.add_argument("--timeout", type=_positive(float), default=600, help="seconds a job may take from submission, and that all "
                                                                               "servers may be down (default %(default)s)")  # fmt: skip
    parser.add_argument("--lost-after", type=_positive(float), default=30, help="seconds before a down server's jobs go to other "
                                                                                 "servers (default %(default)s)")  # fmt: skip
    parser.add_argument("--poll", type=_positive(float), default=0.5, help=argparse.SUPPRESS)  # seconds between polls
    parser.add_argument("--backoff", type=_positive(float), default=1.0, help=argparse.SUPPRESS)  # first wait on a down server
    parser.add_argument("--json", type=Path, help="also write the results (totals and jobs) as JSON to this file")
    return parser


def check_modes(args: argparse.Namespace) -> None:
    """Options of one mode used in the other are errors that say where the value belongs."""
    legacy = {"--workflow": args.workflow, "-n": args.count, "--seed": args.seed, "--prompts": args.prompts, "--resolutions": args.resolutions}
    if args.job:
        for option, value in legacy.items():
            if value is not None:
                raise ClientError(f"{option}: not with --job; put it in the job spec (fields: {', '.join(SPEC_FIELDS)})")
    else:
        for option, value in (("--resume", args.resume), ("--images", args.images)):
            if value is not None:
                raise ClientError(f"{option}: only with --job SPEC (without a spec the images go to --out)")


def prepare(args: argparse.Namespace) -> tuple[list[Job], dict, Path | None, str, list[dict]]:
    """(jobs, results meta, results path, the opening line, the --resume records kept) for either mode."""
    if args.job:
        spec = load_spec(args.job, args.set)
        meta = {"spec": str(args.job), "workflow": str(spec.workflow_path)}
        skipped, kept = apply_resume(spec.jobs, args.resume) if args.resume else (0, [])
        out = args.out or args.resume or Path("bcg_results.json")
        resumed = f"; {skipped} already done in {args.resume}" if args.resume else ""
        resumed += f"; {len(kept)} other record(s) there kept as they are (not jobs of this spec)" if kept else ""
        return spec.jobs, meta, out, f"{len(spec.jobs)} job(s) ({spec.shape}){resumed}", kept
    workflow_path = args.workflow or DEFAULT_WORKFLOW
    workflow = load_workflow(workflow_path, "--workflow")
    apply_sets(workflow, args.set)
    resolutions = parse_resolutions(args.resolutions) if args.resolutions else None
    count = 4 if args.count is None else args.count
    jobs = legacy_jobs(workflow, count, args.seed or 0, args.prompts, resolutions)
    return jobs, {"workflow": str(workflow_path)}, None, f"{count} prompt(s) of {workflow_path.name}", []


def totals_lines(label: str, replayed: int, eager: Counter, head: str) -> list[str]:
    """``<head> replayed r/c DiT calls (p%); eager e`` and one line per eager reason."""
    calls = replayed + sum(eager.values())
    share = f" ({100 * replayed / calls:.0f}%)" if calls else ""
    lines = [f"{label}{head}replayed {replayed}/{calls} DiT calls{share}; eager {sum(eager.values())}"]
    return lines + [f"  {n}x {reason}" for reason, n in eager.most_common()]


def summary_lines(batch: Batch, document: dict, folder: Path | None) -> list[str]:
    """The closing report: per server, totals, images, failures."""
    lines = []
    for w in batch.workers:
        head = f"{w.label}: {w.done} done, {w.failed} failed, {w.lost} lost and resubmitted; BCG "
        if w.status.error:
            lines.append(f"{head}totals unavailable: {w.status.error}")
        else:
            lines += totals_lines("", w.status.replayed, w.status.eager, head)
    eager = Counter(document["eager"])
    ran = sum(w.done for w in batch.workers)
    lines += totals_lines("", document["replayed"], eager, f"BCG over {ran} prompt(s): ")
    if document["cached"]:
        lines.append(f"  {document['cached']} of them served from ComfyUI's cache (nothing sampled, no DiT call)")
    if folder is not None:
        lines.append(f"{len(document['images'])} image(s) in {folder}")
    failed = [j for j in batch.jobs if j.status == "failed"]
    if failed:  # their errors were printed as they failed (each once) and are in the results
        keys = ", ".join(j.key for j in failed[:10]) + (f" and {len(failed) - 10} more" if len(failed) > 10 else "")
        lines.append(f"{len(failed)} job(s) failed for good: {keys} (the errors are above)")
    return lines


def check_folder(folder: Path, option: str) -> None:
    """Make ``folder`` and write a file in it, or raise the WriteError saying why not and the fix."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise write_error(folder, e, "images", option) from None


def check_reachable(servers: list[str], timeout: float = 10) -> None:
    """Raise ServerDown when none of ``servers`` answers GET /queue (a typo in --server fails at once)."""
    errors = []
    for url in servers:
        try:
            http_json(url, "/queue", timeout=timeout)
            return
        except ServerDown as e:
            errors.append(str(e))
    raise ServerDown(errors[0] if len(errors) == 1 else f"none of the {len(servers)} servers answers: " + "; ".join(errors))


def main(argv: list[str] | None = None) -> int:
    """The CLI; 0 when every job is done, 1 on bad input or any job failed, 130 when interrupted."""
    args = build_parser().parse_args(argv)
    try:
        check_modes(args)
        servers = parse_servers(args.servers) if args.servers else parse_servers(args.server)
        jobs, meta, results_path, opening, kept = prepare(args)
        check_reachable(servers)
    except (ClientError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    folder = args.images if args.job else (args.out or Path("bcg_client_out"))
    config = BatchConfig(in_flight=args.in_flight, retries=args.retries, timeout=args.timeout, lost_after=args.lost_after,
                         poll=args.poll, backoff=(args.backoff, max(args.backoff, 30.0)), images=folder,
                         images_option="--images" if args.job else "--out")  # fmt: skip
    paths = [(p, o) for p, o in ((results_path, "--out"), (args.json, "--json")) if p is not None]
    last_save = [0.0]

    def save(force: bool = False) -> None:
        """Write the results files (at most once a second unless forced); a WriteError if one cannot be."""
        if paths and (force or time.monotonic() - last_save[0] >= 1.0):
            document = results_document(batch, {**meta, "servers": servers}, kept)
            for path, option in paths:
                try:
                    write_json(path, document)
                except OSError as e:
                    raise write_error(path, e, "results", option) from None
            last_save[0] = time.monotonic()

    batch = Batch(jobs, servers, config, report=lambda line: print(line, flush=True), on_change=save)
    try:  # before any prompt is submitted: an unwritable --out / --json / --images stops here
        save(force=True)
        if folder is not None:
            check_folder(folder, config.images_option)
    except WriteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"{opening}; {batch.total} to run on {len(servers)} server(s): {', '.join(servers)}", flush=True)
    interrupted = False
    try:
        batch.run()
    except KeyboardInterrupt:
        interrupted = True
    try:
        with batch.lock:
            save(force=True)
    except WriteError as e:
        if batch.fatal is None or str(e) != str(batch.fatal):
            print(f"error: {e}", file=sys.stderr)
        if batch.fatal is None:
            return 1
        results_path = None  # not written: no --resume hint
    if batch.fatal is not None:
        left = sum(j.status == "pending" for j in batch.jobs)
        again = f"; {left} job(s) not done: fix it and run again with --resume {results_path}" if results_path and left else ""
        print(f"error: {batch.fatal}{again}", file=sys.stderr)
        return 1
    document = results_document(batch, meta, kept)
    for line in summary_lines(batch, document, folder):
        print(line)
    if results_path is not None:
        print(f"results in {results_path}")
    if interrupted:
        print(f"interrupted: {document['pending']} job(s) not run; run again with --resume {results_path}" if results_path
              else "interrupted", file=sys.stderr)  # fmt: skip
        return 130
    return 1 if document["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
