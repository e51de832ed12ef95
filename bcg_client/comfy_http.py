"""ComfyUI's HTTP API as the client uses it: queue a prompt, poll its history, fetch its files, read
GET /bcg/status; ComfyUI's error answers as one readable line. Standard library only (urllib)."""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from .errors import ClientError, ServerDown
from .files import image_name, save_files

DOWN_CODES = (502, 503, 504)


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
            parts.append(
                ": ".join(str(error[k]).strip().replace("\n", "; ") for k in ("message", "details") if error.get(k))
                or "refused"
            )
        else:
            parts.append(str(error))
    hint = (
        "; a file the workflow names (a model?) is not on that server: add it to its models folder or change the workflow"
        if missing
        else ""
    )
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
        raise (ServerDown if e.code in DOWN_CODES else ClientError)(
            f"{e.code} from {path}: {comfy_error_text(body)}"
        ) from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
        reason = getattr(e, "reason", None) or str(e) or type(e).__name__
        raise ServerDown(
            f"cannot reach ComfyUI at {server} ({reason}); start it or pass --server / --servers"
        ) from None


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
        raise ClientError(
            f"POST /prompt on {server} answered without a prompt_id: {json.dumps(answer)[:200]}; is it ComfyUI?"
        )
    return answer["prompt_id"]


def execution_error(prompt_id: str, status: dict) -> str:
    """A readable message for a history entry whose status_str is "error"."""
    errors = [m[1] for m in status.get("messages", []) if m[0] == "execution_error"]
    detail = "; ".join(
        f"node {e.get('node_id')} ({e.get('node_type')}): {e.get('exception_message', '').strip()}" for e in errors
    )
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
    raise ClientError(
        f"prompt {prompt_id} not finished after {timeout:.0f}s (raise --timeout, or check the server log)"
    )


def execution_seconds(entry: dict) -> float | None:
    """Seconds ComfyUI spent executing a finished prompt: from its history's execution_start to its
    execution_success message (ComfyUI stamps both in milliseconds); None when either is missing.

    Unlike the time from submission this leaves out the wait in the server's queue."""
    stamps = {}
    for message in (entry.get("status") or {}).get("messages") or []:
        if isinstance(message, list) and len(message) == 2 and isinstance(message[1], dict):
            if message[0] in ("execution_start", "execution_success") and isinstance(
                message[1].get("timestamp"), (int, float)
            ):
                stamps[message[0]] = message[1]["timestamp"]
    if len(stamps) < 2:
        return None
    return round((stamps["execution_success"] - stamps["execution_start"]) / 1000, 3)


def output_files(entry: dict) -> list[dict]:
    """Every file a history entry's outputs name: ``{"node", "kind", "filename", "subfolder", "type"}``."""
    files = []
    for node_id, output in sorted(entry.get("outputs", {}).items()):
        for kind, items in sorted(output.items()):
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict) and "filename" in item:
                    files.append(
                        {
                            "node": node_id,
                            "kind": kind,
                            **{k: item.get(k, "") for k in ("filename", "subfolder", "type")},
                        }
                    )
    return files


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
            raise ClientError(
                "GET /bcg/status is 404: install the ComfyUI-BCG pack in this ComfyUI's custom_nodes and restart it"
            ) from None
        raise


def server_label(url: str) -> str:
    """host:port of a server URL, for progress lines."""
    return urllib.parse.urlparse(url).netloc or url


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


def check_reachable(servers: list[str], timeout: float = 10) -> None:
    """Raise ServerDown when none of ``servers`` answers GET /queue (a typo in --server fails at once)."""
    errors = []
    for url in servers:
        try:
            http_json(url, "/queue", timeout=timeout)
            return
        except ServerDown as e:
            errors.append(str(e))
    raise ServerDown(
        errors[0] if len(errors) == 1 else f"none of the {len(servers)} servers answers: " + "; ".join(errors)
    )
