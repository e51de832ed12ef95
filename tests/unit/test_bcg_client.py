"""The headless client (bcg_client, run as scripts/bcg_client.py): job specs, spreading over servers, recovery, --resume and the totals.

The servers are in-process fakes of ComfyUI's HTTP API (the network peer only): POST /prompt,
GET /queue, GET /history/<id>, GET /bcg/status, GET /view and POST /queue (delete). Each runs its
queue one prompt at a time and counts the KSampler's steps as replayed DiT calls when the latent
size is in ``captured``, else as eager ``not captured: WxH``. A prompt equal to one it ran before
(in this life) is served from its cache, as ComfyUI does: no counts move, and the history's
``execution_cached`` message lists every node.
"""

from __future__ import annotations

import errno
import json
import ntpath
import posixpath
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath, PureWindowsPath
from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "scripts" / "bcg_api_example.json"
FAST = ["--poll", "0.02", "--backoff", "0.05", "--lost-after", "0.3", "--timeout", "30"]


from bcg_client import cli, comfy_http, files, status  # noqa: E402  the pack's folder is on sys.path (tests/conftest.py)
from bcg_client import jobs as specs  # noqa: E402


# ------------------------------------------------------------------------------ the fake server
class FakeComfy:
    """A ComfyUI stand-in on 127.0.0.1: ``stop()`` takes it down (connection refused), ``start()``
    brings it back on the same port, ``restart()`` forgets its queue, history and BCG session as a
    restarted process would. ``on_prompt(fake, n)`` runs after the n-th accepted POST /prompt."""

    def __init__(self, work_s: float = 0.02, captured=("64x64",), fail_texts=("BOOM",), on_prompt=None, outputs=None):
        self.work_s, self.captured, self.fail_texts, self.on_prompt = work_s, set(captured), set(fail_texts), on_prompt
        self.outputs = outputs  # the history's "outputs" of every prompt, instead of one SaveImage image
        self.lock = threading.Lock()
        self.received: list[tuple[str, dict]] = []  # every accepted prompt, over all lives
        self.port, self.down = 0, threading.Event()
        self._forget()
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _forget(self) -> None:
        self.queue, self.running, self.history, self.generation = [], None, {}, getattr(self, "generation", 0) + 1
        self.cache: dict[str, dict] = {}  # a prompt's JSON -> its outputs
        self.session = {"id": uuid.uuid4().hex[:8], "node_ids": ["7", "8"], "hits": 0, "eager": {}, "last_run": None}

    def start(self) -> None:
        with self.lock:
            self._forget()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), _Handler)
        self.httpd.daemon_threads, self.httpd.fake = True, self
        self.port = self.httpd.server_address[1]
        self.alive = threading.Event()
        self.alive.set()
        self.down.clear()
        self.threads = [
            threading.Thread(target=self.httpd.serve_forever, daemon=True),
            threading.Thread(target=self._execute, daemon=True),
        ]
        for t in self.threads:
            t.start()

    def stop(self) -> None:
        if self.alive.is_set():
            self.alive.clear()
            self.httpd.shutdown()
            self.httpd.server_close()
            self.down.set()

    def start_when_down(self) -> None:
        """Start again once a stop (maybe on another thread) has closed the port."""
        self.down.wait(10)
        self.start()

    def restart(self) -> None:
        with self.lock:
            self._forget()

    def _execute(self) -> None:
        """Run queued prompts one by one; a result of an older life (before a restart) is dropped."""
        while self.alive.is_set():
            with self.lock:
                if self.running is None and self.queue:
                    self.running = self.queue.pop(0)
                task, generation = self.running, self.generation
            if task is None:
                time.sleep(0.005)
                continue
            time.sleep(self.work_s)
            with self.lock:
                if generation == self.generation:
                    self.history[task[0]] = self._run(*task)
                    self.running = None

    def _run(self, prompt_id: str, prompt: dict) -> dict:
        sampler = next(n for n in prompt.values() if n["class_type"] == "KSampler")["inputs"]
        latent = next(n for n in prompt.values() if n["class_type"] == "EmptySD3LatentImage")["inputs"]
        text = prompt["4"]["inputs"]["text"]
        if any(t in text for t in self.fail_texts):
            error = {"node_id": "10", "node_type": "KSampler", "exception_message": "boom\n"}
            return {
                "outputs": {},
                "status": {"status_str": "error", "completed": False, "messages": [["execution_error", error]]},
            }
        size, steps = f"{latent['width']}x{latent['height']}", sampler["steps"]
        same = json.dumps(prompt, sort_keys=True)
        if same in self.cache:  # ComfyUI's cache: nothing runs, /bcg/status stays as it is
            return self._entry(prompt_id, self.cache[same], cached=list(prompt))
        if size in self.captured:
            self.session["hits"] += steps
        else:
            reason = f"not captured: {size}"
            self.session["eager"][reason] = self.session["eager"].get(reason, 0) + steps
        self.session["last_run"] = {"summary": f"replayed {steps if size in self.captured else 0}/{steps} calls"}
        image = {"filename": f"BCG_{len(self.history):05d}_.png", "subfolder": "", "type": "output"}
        self.cache[same] = self.outputs or {"12": {"images": [image]}}
        return self._entry(prompt_id, self.cache[same], cached=[])

    @staticmethod
    def _entry(prompt_id: str, outputs: dict, cached: list[str]) -> dict:
        messages = [["execution_start", {"prompt_id": prompt_id}], ["execution_cached", {"nodes": cached, "prompt_id": prompt_id}],
                    ["execution_success", {"prompt_id": prompt_id}]]  # fmt: skip
        return {"outputs": outputs, "status": {"status_str": "success", "completed": True, "messages": messages}}

    def prompts_of(self, key: str) -> list[dict]:
        return [p for _, p in self.received if key in json.dumps(p)]


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, code: int, body) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        fake, url = self.server.fake, urlparse(self.path)
        with fake.lock:
            if url.path == "/queue":
                running = [[0, fake.running[0], {}, {}, []]] if fake.running else []
                pending = [[i + 1, pid, {}, {}, []] for i, (pid, _) in enumerate(fake.queue)]
                return self._send(200, {"queue_running": running, "queue_pending": pending})
            if url.path.startswith("/history/"):
                prompt_id = url.path.rsplit("/", 1)[1]
                entry = fake.history.get(prompt_id)
                return self._send(200, {prompt_id: entry} if entry else {})
            if url.path == "/bcg/status":
                return self._send(200, {"sessions": [json.loads(json.dumps(fake.session))]})
            if url.path == "/view":
                return self._send(200, b"PNG:" + parse_qs(url.query)["filename"][0].encode())
        self._send(404, {"error": "not found"})

    def do_POST(self):
        fake, path = self.server.fake, urlparse(self.path).path
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if path == "/queue":
            with fake.lock:
                fake.queue = [q for q in fake.queue if q[0] not in body.get("delete", [])]
            return self._send(200, {})
        if path != "/prompt":
            return self._send(404, {"error": "not found"})
        prompt = body["prompt"]
        if "MISSING" in prompt["4"]["inputs"]["text"]:  # ComfyUI's answer when a model file is not there
            details = "unet_name: 'flux.safetensors' not in []"
            error = {
                "type": "prompt_outputs_failed_validation",
                "message": "Prompt outputs failed validation",
                "details": f"Value not in list: {details}",
                "extra_info": {},
            }
            reason = {
                "type": "value_not_in_list",
                "message": "Value not in list",
                "details": details,
                "extra_info": {"input_name": "unet_name", "received_value": "flux.safetensors"},
            }
            node_errors = {"1": {"errors": [reason], "dependent_outputs": ["12"], "class_type": "UNETLoader"}}
            return self._send(400, {"error": error, "node_errors": node_errors})  # fmt: skip
        if "REFUSE" in prompt["4"]["inputs"]["text"]:
            errors = {"4": {"errors": [{"message": "Value not in list"}], "class_type": "CLIPTextEncode"}}
            return self._send(400, {"error": {"message": "Prompt outputs failed validation"}, "node_errors": errors})
        prompt_id = uuid.uuid4().hex
        with fake.lock:
            fake.queue.append((prompt_id, prompt))
            fake.received.append((prompt_id, prompt))
            n = len(fake.received)
        self._send(200, {"prompt_id": prompt_id, "number": n, "node_errors": {}})
        if fake.on_prompt:
            fake.on_prompt(fake, n)


@pytest.fixture
def fakes():
    made = []

    def make(**kwargs) -> FakeComfy:
        made.append(FakeComfy(**kwargs))
        return made[-1]

    yield make
    for fake in made:
        fake.stop()


# -------------------------------------------------------------------------------------- helpers
def write_spec(tmp_path: Path, **fields) -> Path:
    spec = {"workflow": str(EXAMPLE), "steps": 4, **fields}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return path


def run(capsys, *argv) -> tuple[int, str, str]:
    rc = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


def results(path: Path) -> dict:
    return json.loads(path.read_text())


# ------------------------------------------------------------------------------------ job specs
def test_spec_is_the_cross_product_and_edits_the_example_nodes(tmp_path):
    spec = write_spec(
        tmp_path, prompts=["a fox", "a lighthouse"], seeds=2, seed_start=5, sizes=["64x64", "96x64"], cfg=2.5
    )
    parsed = specs.load_spec(spec)
    assert len(parsed.jobs) == 8 and parsed.shape == "2 prompts x 2 seeds x 2 sizes"
    job = parsed.jobs[-1]
    assert (job.text, job.seed, job.size) == ("a lighthouse", 6, (96, 64))
    nodes = job.prompt
    assert nodes["4"]["inputs"]["text"] == "a lighthouse"
    assert (nodes["9"]["inputs"]["width"], nodes["9"]["inputs"]["height"]) == (96, 64)
    assert {k: nodes["10"]["inputs"][k] for k in ("seed", "steps", "cfg")} == {"seed": 6, "steps": 4, "cfg": 2.5}
    assert len({j.key for j in parsed.jobs}) == 8 and job.key.startswith("s6_96x64_")
    assert [j.key for j in specs.load_spec(spec).jobs] == [j.key for j in parsed.jobs], (
        "keys must be stable for --resume"
    )


def test_spec_prompt_file_explicit_nodes_and_set(tmp_path):
    (tmp_path / "wf.json").write_text(EXAMPLE.read_text())
    (tmp_path / "prompts.txt").write_text("first prompt\n\n  second prompt  \n")
    nodes = {"text": "4", "latent": 9, "seed": "10", "sampler": ["10"]}
    spec = write_spec(
        tmp_path, workflow="wf.json", prompts="prompts.txt", seeds=[7], nodes=nodes, set={"8.resolutions": "64x64"}
    )
    jobs = specs.load_spec(spec).jobs
    assert [j.text for j in jobs] == ["first prompt", "second prompt"]
    assert all(
        j.prompt["8"]["inputs"]["resolutions"] == "64x64" and j.prompt["10"]["inputs"]["seed"] == 7 for j in jobs
    )
    assert all(j.prompt["9"]["inputs"]["width"] == 1024 for j in jobs), "no sizes: the workflow's own size"


@pytest.mark.parametrize(
    "fields,message",
    [
        ({"sizes": ["512x"]}, "sizes: '512x' is not WIDTHxHEIGHT (e.g. 1024x1024)"),
        (
            {"sizes": ["1001x1000"]},
            "sizes: '1001x1000' has width 1001, not a multiple of 8 (the latent grid); use 1000 or 1008",
        ),
        ({"sizes": "512x512"}, 'sizes: "512x512" must be a non-empty list of "WIDTHxHEIGHT" strings'),
        ({"seeds": "four"}, 'seeds: "four" is neither a list of seeds nor a count'),
        ({"seeds": 0}, "seeds: 0 is not a count of seeds"),
        ({"seeds": [1, 1]}, "seeds: 1 is listed twice; remove one"),
        ({"seeds": [1], "seed_start": 3}, "seed_start: only with a count of seeds"),
        ({"prompts": []}, "prompts: [] must be a non-empty list of non-empty strings, or a text file"),
        ({"prompts": "missing.txt"}, "prompts: cannot read"),
        ({"steps": 0}, "steps: 0 is not an integer from 1 to 10000; give the sampler's step count"),
        ({"cfg": "high"}, "cfg: 'high' is not a number from 0 to 100"),
        ({"nodes": {"text": "99"}}, "nodes.text: node '99' is not in the workflow (its nodes: 1, 2,"),
        (
            {"nodes": {"latent": "4"}},
            "nodes.latent: node '4' (CLIPTextEncode) has no width input; give the id of its EmptySD3LatentImage",
        ),
        ({"nodes": {"vae": "3"}}, 'nodes: {"vae": "3"} must be an object with keys among text, latent, seed, sampler'),
        ({"seed": 3}, "seed: not a job spec field; the fields are workflow, prompts, seeds"),
        ({"workflow": None}, "workflow: missing; give the path of an API-format workflow JSON"),
        ({"workflow": "nowhere.json"}, "nowhere.json': cannot read it"),
        ({"set": {"99.x": 1}}, "set '99.x': expected NODE_ID.INPUT=VALUE with a node id of the workflow"),
    ],
)
def test_bad_spec_names_the_field_and_the_fix(tmp_path, capsys, fields, message):
    rc, out, err = run(capsys, "--job", write_spec(tmp_path, **fields), "--server", "http://127.0.0.1:9")
    assert rc == 1 and message in err and not out


def test_spec_without_a_prompt_node_and_bad_files(tmp_path, capsys):
    workflow = json.loads(EXAMPLE.read_text())
    workflow["10"]["inputs"]["positive"] = ["5", 0]  # a ConditioningZeroOut: no text to set
    (tmp_path / "wf.json").write_text(json.dumps(workflow))
    rc, _, err = run(capsys, "--job", write_spec(tmp_path, workflow="wf.json", prompts=["x"]))
    assert (
        rc == 1
        and "prompts: the workflow has no CLIPTextEncode on the sampler's positive input to set; give its id in nodes.text"
        in err
    )
    (tmp_path / "bad.json").write_text("{not json")
    rc, _, err = run(capsys, "--job", tmp_path / "bad.json")
    assert rc == 1 and "bad.json' is not JSON (Expecting property name" in err
    (tmp_path / "ui.json").write_text(json.dumps({"nodes": [], "links": []}))
    rc, _, err = run(capsys, "--job", write_spec(tmp_path, workflow="ui.json"))
    assert rc == 1 and "is a UI workflow; export the API format" in err


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--job", "{spec}", "--prompts", "x"], "--prompts: not with --job; put it in the job spec"),
        (["--resume", "r.json"], "--resume: only with --job SPEC"),
        (["--job", "{spec}", "--servers", "http://a:1,http://a:1"], "--servers: 'http://a:1' is listed twice"),
        (
            ["--job", "{spec}", "--servers", "ftp://a"],
            "--servers: 'ftp://a' is not a server URL (e.g. http://127.0.0.1:8188)",
        ),
        (["--job", "{spec}", "--resume", "{spec}"], 'no "jobs" list; give a results JSON written by this client'),
        (["--job", "{spec}", "--servers", "127.0.0.1:9"], "cannot reach ComfyUI at http://127.0.0.1:9"),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path, capsys, argv, message):
    spec = str(write_spec(tmp_path))
    rc, _, err = run(capsys, *[a.replace("{spec}", spec) for a in argv])
    assert rc == 1 and message in err


def test_help_documents_the_spec(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0
    for text in (
        "/bcg/status",
        "--resolutions",
        "--servers",
        "--resume",
        '"sizes": ["1024x1024", "768x1344"]',
        "seed_start",
    ):
        assert text in out


# ------------------------------------------------------------------------------------- batches
def test_jobs_spread_over_two_servers_with_per_server_totals(tmp_path, capsys, fakes):
    a, b = fakes(), fakes()
    a.session["hits"] = 100  # work before the batch: not part of its totals
    spec = write_spec(tmp_path, prompts=["p1", "p2", "p3"], seeds=2, sizes=["64x64", "96x64"])
    out_path, images = tmp_path / "results.json", tmp_path / "images"
    rc, out, _ = run(
        capsys, "--job", spec, "--servers", f"{a.url},{b.url}", "--out", out_path, "--images", images, *FAST
    )
    assert rc == 0, out
    doc = results(out_path)
    assert (doc["prompts"], doc["done"], doc["failed"]) == (12, 12, 0)
    by_server = {a.url: a, b.url: b}
    for job in doc["jobs"]:
        fake = by_server[job["server"]]
        assert job["status"] == "done" and job["prompt_id"] in {pid for pid, _ in fake.received}
        assert job["outputs"][0]["filename"].startswith("BCG_") and Path(job["images"][0]).read_bytes().startswith(
            b"PNG:"
        )
    assert len(a.received) + len(b.received) == 12 and a.received and b.received, "both servers take jobs"
    for url in by_server:
        mine = [j for j in doc["jobs"] if j["server"] == url]
        small = sum(j["width"] == 64 for j in mine)
        assert doc["per_server"][url] == {
            "done": len(mine),
            "failed": 0,
            "lost": 0,
            "replayed": 4 * small,
            "calls": 4 * len(mine),
            "eager": {"not captured: 96x64": 4 * (len(mine) - small)} if len(mine) > small else {},
        }
        assert (
            f"{comfy_http.server_label(url)}: {len(mine)} done, 0 failed, 0 lost and resubmitted; BCG replayed {4 * small}/{4 * len(mine)}"
            in out
        )
    assert (doc["replayed"], doc["calls"], doc["eager"]) == (24, 48, {"not captured: 96x64": 24})
    assert (
        "BCG over 12 prompt(s): replayed 24/48 DiT calls (50%); eager 24" in out and "  24x not captured: 96x64" in out
    )
    assert "[12/12] " in out and "jobs/min" in out and "12 image(s) in" in out


def test_a_restarted_server_loses_nothing(tmp_path, capsys, fakes):
    a = fakes(work_s=0.05, on_prompt=lambda fake, n: n == 2 and fake.restart())  # forgets its queue and history
    b = fakes(work_s=0.05)
    spec = write_spec(tmp_path, prompts=["p1", "p2"], seeds=4, sizes=["64x64"])
    out_path = tmp_path / "results.json"
    rc, out, _ = run(capsys, "--job", spec, "--servers", f"{a.url},{b.url}", "--out", out_path, *FAST)
    assert rc == 0, out
    doc = results(out_path)
    assert doc["done"] == 8 and all(j["status"] == "done" for j in doc["jobs"])
    vanished = [j for j in doc["jobs"] if "vanished" in str(j["attempts"])]
    assert vanished and all(len(j["attempts"]) >= 2 and j["attempts"][-1]["result"] == "done" for j in vanished)
    assert "vanished from" in out and "resubmitting (attempt 2 of 4)" in out
    assert doc["per_server"][a.url]["lost"] >= 1


def test_a_server_that_goes_down_hands_its_jobs_to_the_others_and_is_retried(tmp_path, capsys, fakes):
    b = fakes(work_s=0.1, on_prompt=lambda fake, n: n == 2 and threading.Thread(target=fake.stop).start())
    # b comes back (a fresh process on the same port) while a still has work: at a's 3rd prompt
    a = fakes(work_s=0.1, on_prompt=lambda fake, n: n == 3 and threading.Thread(target=b.start_when_down).start())
    spec = write_spec(tmp_path, prompts=["p1", "p2", "p3"], seeds=4, sizes=["64x64"])
    out_path = tmp_path / "results.json"
    rc, out, _ = run(
        capsys, "--job", spec, "--servers", f"{a.url},{b.url}", "--out", out_path, "--in-flight", "1", *FAST
    )
    assert rc == 0, out
    doc = results(out_path)
    assert doc["done"] == 12 and doc["failed"] == 0
    label = comfy_http.server_label(b.url)
    assert f"{label}: not answering (cannot reach ComfyUI at {b.url}" in out
    moved = [j for j in doc["jobs"] if len(j["attempts"]) > 1]
    assert moved and all(j["attempts"][0]["server"] == b.url for j in moved)
    assert all(
        ("did not answer" in j["attempts"][0]["result"]) or ("vanished" in j["attempts"][0]["result"]) for j in moved
    )
    assert f"{label}: answering again" in out


def test_a_job_lost_again_and_again_fails_after_the_retries(tmp_path, capsys, fakes):
    a = fakes(on_prompt=lambda fake, n: fake.restart())  # every prompt vanishes
    out_path = tmp_path / "results.json"
    rc, out, _ = run(
        capsys, "--job", write_spec(tmp_path, seeds=[1]), "--server", a.url, "--out", out_path, "--retries", "2", *FAST
    )
    assert rc == 1
    (job,) = results(out_path)["jobs"]
    assert job["status"] == "failed" and len(job["attempts"]) == 3 == len(a.received)
    assert job["error"].startswith("lost 3 times (limit: --retries 2); last: prompt ")
    assert "1 job(s) failed for good:" in out


def test_refused_and_failing_prompts_fail_for_good_without_retry(tmp_path, capsys, fakes):
    a = fakes()
    out_path = tmp_path / "results.json"
    spec = write_spec(tmp_path, prompts=["fine", "BOOM now", "REFUSE this"], seeds=[1])
    rc, out, _ = run(capsys, "--job", spec, "--server", a.url, "--out", out_path, *FAST)
    assert rc == 1
    jobs = {j["prompt"]: j for j in results(out_path)["jobs"]}
    assert jobs["fine"]["status"] == "done"
    assert jobs["BOOM now"]["status"] == "failed" and "node 10 (KSampler): boom" in jobs["BOOM now"]["error"]
    assert len(jobs["BOOM now"]["attempts"]) == 1
    assert jobs["REFUSE this"]["error"].startswith(f"refused by {comfy_http.server_label(a.url)}: 400 from /prompt")
    assert "2 job(s) failed for good:" in out


def test_resume_runs_only_what_is_not_done(tmp_path, capsys, fakes):
    a = fakes()
    out_path = tmp_path / "results.json"
    spec = write_spec(tmp_path, prompts=["one", "two BOOM"], seeds=2)
    rc, _, _ = run(capsys, "--job", spec, "--server", a.url, "--out", out_path, *FAST)
    assert rc == 1 and results(out_path)["done"] == 2 and len(a.received) == 4

    a.fail_texts = set()  # the cause is fixed
    rc, out, _ = run(capsys, "--job", spec, "--server", a.url, "--resume", out_path, *FAST)
    assert rc == 0, out
    assert "4 job(s) (2 prompts x 2 seeds); 2 already done in" in out and "2 to run" in out
    assert len(a.received) == 6 and len(a.prompts_of("two BOOM")) == 4
    doc = results(out_path)  # --out defaults to the --resume file
    assert doc["done"] == 4 and all(j["status"] == "done" for j in doc["jobs"])

    rc, out, _ = run(capsys, "--job", spec, "--server", a.url, "--resume", out_path, *FAST)
    assert rc == 0 and "0 to run" in out and len(a.received) == 6


def test_the_quick_cli_without_a_spec_still_works(tmp_path, capsys, fakes):
    a = fakes()
    out, summary = tmp_path / "client_out", tmp_path / "summary.json"
    rc, stdout, _ = run(capsys, "--server", a.url, "-n", "2", "--seed", "100", "--resolutions", "64x64,96x64",
                        "--out", out, "--json", summary, "--poll", "0.02")  # fmt: skip
    assert rc == 0, stdout
    totals = json.loads(summary.read_text())
    assert (totals["calls"], totals["replayed"], totals["eager"]) == (16, 8, {"not captured: 96x64": 8})
    assert sorted(Path(p).name for p in totals["images"]) == [
        "000_seed100_SaveImage_n12_0.png",
        "001_seed101_SaveImage_n12_0.png",
    ]
    assert sorted(p["10"]["inputs"]["seed"] for _, p in a.received) == [100, 101]
    assert "replayed 8/16 DiT calls" in stdout and "2 image(s) in" in stdout


# -------------------------------------------------------------------------------------- totals
def test_totals_survive_a_restart_between_snapshots():
    before = [{"id": "old", "hits": 50, "eager": {"x": 2}}]
    assert status.run_totals(before, [{"id": "old", "hits": 58, "eager": {"x": 3}}]) == (8, {"x": 1})
    assert status.run_totals(before, [{"id": "old", "hits": 8, "eager": {}}]) == (8, {}), (
        "counts went down: a new process"
    )
    assert status.run_totals(before, [{"id": "new", "hits": 4, "eager": {"y": 1}}]) == (4, {"y": 1})
    older_pack = [{"id": "old", "hits": 58, "misses": {"x": 3}}]  # the name before 2026-12
    assert status.run_totals([{"id": "old", "hits": 50, "misses": {"x": 2}}], older_pack) == (8, {"x": 1})


# ------------------------------------------------------------------------------- saved file names
NASTY_IDS = ["12", "..\\..\\AppData\\Roaming\\Startup\\evil", "../../etc/evil", "5:12", "C:\\Windows\\evil", "/abs/evil",
             "\\\\server\\share\\x", "CON", "nul", "COM1", "lpt9", "trailing. ", "dots...", ".hidden", "x" * 300, "", "a/b:c*d?e\"<>|",
             "\x00nul", "é✓"]  # fmt: skip
NASTY_FILES = ["BCG_00001_.png", "..\\..\\evil.exe", "x.png:stream", "y.PNG", "noext", "z.png ", "w.bat", "../a.png"]


def _safe_everywhere(name: str, folder_win: str = "C:\\out", folder_posix: str = "/out") -> None:
    """``name`` is one plain file name inside the folder under Windows and POSIX rules."""
    assert (
        PureWindowsPath(name).name == name and not PureWindowsPath(name).drive and not PureWindowsPath(name).anchor
    ), name
    assert PurePosixPath(name).name == name and name not in (".", ".."), name
    assert ntpath.dirname(ntpath.normpath(ntpath.join(folder_win, name))) == folder_win, name
    assert posixpath.dirname(posixpath.normpath(posixpath.join(folder_posix, name))) == folder_posix, name
    assert ":" not in name and not name.endswith((".", " ")) and not name.startswith("."), (
        name
    )  # no NTFS stream, no trimming
    assert name.split(".")[0].upper() not in files.WINDOWS_DEVICES, name
    assert len(name) <= 200 and name.isascii() and name.isprintable(), name


def test_saved_names_are_ours_and_stay_inside_the_folder_on_every_os():
    names = set()
    for node_id in NASTY_IDS:
        for filename in NASTY_FILES:
            for class_type in ("SaveImage", None, "../Evil:Class", "CON"):
                name = files.image_name("007_s1_64x64_0123456789", node_id, class_type, 0, filename)
                _safe_everywhere(name)
                assert name.startswith("007_s1_64x64_0123456789_")
                names.add((node_id, name))
    by_id = {}
    for node_id, name in names:
        by_id.setdefault(name, set()).add(node_id)
    assert all(len(ids) == 1 for ids in by_id.values()), "two node ids must not share a file name"
    assert files.image_name("000_seed1", "5:12", "SaveImage", 2, "a.webp").startswith("000_seed1_SaveImage_n5-12-")
    assert files.image_name("000_seed1", "12", "SaveImage", 0, "a.webp") == "000_seed1_SaveImage_n12_0.webp"
    assert files.image_name("000_seed1", "12", "SaveImage", 0, "x.png:evil").endswith("_0.bin")


def test_server_chosen_names_never_leave_the_images_folder(tmp_path, capsys, fakes):
    outputs = {
        node_id: {"images": [{"filename": f, "subfolder": "", "type": "output"} for f in NASTY_FILES]}
        for node_id in NASTY_IDS
    }
    a = fakes(outputs=outputs)
    images = tmp_path / "deep" / "images"
    rc, out, _ = run(capsys, "--job", write_spec(tmp_path, seeds=[1, 2]), "--server", a.url, "--out", tmp_path / "r.json",
                     "--images", images, *FAST)  # fmt: skip
    assert rc == 0, out
    doc = results(tmp_path / "r.json")
    saved = [Path(p) for j in doc["jobs"] for p in j["images"]]
    assert len(saved) == 2 * len(NASTY_IDS) * len(NASTY_FILES) == len(set(saved))
    assert sorted(p.name for p in images.iterdir()) == sorted(p.name for p in saved)
    for path in saved:
        assert path.parent == images and path.read_bytes().startswith(b"PNG:")
        _safe_everywhere(path.name)
    assert {p.relative_to(tmp_path).parts[0] for p in tmp_path.rglob("*")} == {"deep", "r.json", "spec.json"}
    assert all(p.name.startswith(("000_s1_", "001_s2_")) for p in saved)


# ------------------------------------------------------------------------------- write failures
def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: cannot write the "), err
    return lines[0]


@pytest.mark.parametrize("option", ["--out", "--json", "--images"])
def test_an_unwritable_output_path_stops_before_any_prompt(tmp_path, capsys, fakes, option):
    a = fakes()
    (tmp_path / "afile").write_text("in the way")
    bad = tmp_path / "afile" / ("images" if option == "--images" else "results.json")
    argv = {"--out": ["--out", bad], "--json": ["--out", tmp_path / "r.json", "--json", bad],
            "--images": ["--out", tmp_path / "r.json", "--images", bad]}[option]  # fmt: skip
    started = time.monotonic()
    rc, out, err = run(
        capsys, "--job", write_spec(tmp_path, seeds=2), "--server", a.url, *argv, *FAST[:-2], "--timeout", "5"
    )
    assert rc == 1 and time.monotonic() - started < 4
    line = _one_error_line(err)
    assert (
        str(tmp_path / "afile") in line
        and "a file is where a folder should be on that path; remove it or give another " + option in line
    )
    assert not a.received, "nothing may run when its results cannot be kept"


def test_a_results_write_failing_mid_batch_stops_it_at_once(tmp_path, capsys, fakes, monkeypatch):
    a = fakes(work_s=0.3)  # 8 jobs take 2.4 s: the save due after 1 s fails
    calls, write_json = [0], cli.write_json

    def full_disk(path, data):
        calls[0] += 1
        if calls[0] > 1:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        write_json(path, data)

    monkeypatch.setattr(cli, "write_json", full_disk)
    out_path = tmp_path / "r.json"
    started = time.monotonic()
    rc, out, err = run(
        capsys,
        "--job",
        write_spec(tmp_path, seeds=8),
        "--server",
        a.url,
        "--out",
        out_path,
        *FAST[:-2],
        "--timeout",
        "5",
    )
    assert rc == 1 and time.monotonic() - started < 4
    line = _one_error_line(err)
    assert (
        f"cannot write the results at {str(out_path)!r} (No space left on device); the disk is full; free some space or give --out"
        in line
    )
    assert len(a.received) < 8 and not a.queue, (
        "no prompt submitted after the failure, the queued ones taken off the server"
    )
    assert "not answering" not in out


def test_an_image_write_failing_mid_batch_stops_it_and_resume_finishes(tmp_path, capsys, fakes, monkeypatch):
    a = fakes(work_s=0.05)
    write_bytes = Path.write_bytes

    def broken(self, data):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(Path, "write_bytes", broken)
    out_path, images = tmp_path / "r.json", tmp_path / "images"
    spec = write_spec(tmp_path, seeds=4)
    rc, out, err = run(
        capsys, "--job", spec, "--server", a.url, "--out", out_path, "--images", images, *FAST[:-2], "--timeout", "5"
    )
    assert rc == 1
    line = _one_error_line(err)
    assert (
        f"cannot write the images at {str(images)!r} (Input/output error); check that path, or give --images another one"
        in line
    )
    assert line.endswith(f"4 job(s) not done: fix it and run again with --resume {out_path}")
    doc = results(out_path)
    assert doc["done"] == 0 and doc["pending"] == 4 and not a.queue
    monkeypatch.setattr(Path, "write_bytes", write_bytes)
    rc, out, err = run(capsys, "--job", spec, "--server", a.url, "--resume", out_path, "--images", images, *FAST)
    assert rc == 0 and results(out_path)["done"] == 4 and len(list(images.iterdir())) == 4


def test_resume_after_the_spec_was_edited_keeps_every_record_it_did_not_rerun(tmp_path, capsys, fakes):
    a = fakes()
    out_path = tmp_path / "results.json"
    rc, _, _ = run(
        capsys,
        "--job",
        write_spec(tmp_path, prompts=["one", "two BOOM"], seeds=[1]),
        "--server",
        a.url,
        "--out",
        out_path,
        *FAST,
    )
    assert rc == 1
    first = {j["prompt"]: j for j in results(out_path)["jobs"]}
    a.fail_texts = set()
    edited = write_spec(tmp_path, prompts=["two BOOM", "three"], seeds=[1])  # "one" removed, "three" added
    rc, out, _ = run(capsys, "--job", edited, "--server", a.url, "--resume", out_path, *FAST)
    assert rc == 0, out
    assert (
        "2 job(s) (2 prompts x 1 seeds); 0 already done in" in out and "1 other record(s) there kept as they are" in out
    )
    doc = results(out_path)
    jobs = {j["prompt"]: j for j in doc["jobs"]}
    assert sorted(jobs) == ["one", "three", "two BOOM"] and len(doc["jobs"]) == 3
    assert jobs["one"] == first["one"], "a record not rerun is kept as it was"
    assert jobs["two BOOM"]["status"] == jobs["three"]["status"] == "done" and (
        doc["prompts"],
        doc["done"],
        doc["kept"],
    ) == (2, 2, 1)
    received = len(a.received)
    rc, out, _ = run(capsys, "--job", write_spec(tmp_path, prompts=["one", "two BOOM"], seeds=[1]), "--server", a.url,
                     "--resume", out_path, *FAST)  # fmt: skip
    assert rc == 0 and "2 already done" in out and "0 to run" in out and len(a.received) == received
    assert sorted(j["prompt"] for j in results(out_path)["jobs"]) == ["one", "three", "two BOOM"]


# -------------------------------------------------------------------------------- cached prompts
def test_a_prompt_served_from_comfys_cache_says_so_instead_of_the_last_counts(tmp_path, capsys, fakes):
    a = fakes()
    spec = write_spec(tmp_path, prompts=["a fox"], seeds=[1], sizes=["64x64"])
    rc, out, _ = run(capsys, "--job", spec, "--server", a.url, "--out", tmp_path / "first.json", *FAST)
    assert rc == 0 and "BCG replayed 4/4 calls" in out and "cache" not in out
    rc, out, _ = run(
        capsys, "--job", spec, "--server", a.url, "--out", tmp_path / "again.json", *FAST
    )  # the same prompt again
    assert rc == 0, out
    assert "BCG served from ComfyUI's cache (nothing sampled, no DiT call)" in out and "replayed 4/4 calls" not in out
    assert (
        "BCG over 1 prompt(s): replayed 0/0 DiT calls; eager 0" in out
        and "1 of them served from ComfyUI's cache" in out
    )
    doc = results(tmp_path / "again.json")
    assert doc["cached"] == 1 and doc["jobs"][0]["cached"] is True and doc["replayed"] == 0
    assert results(tmp_path / "first.json")["jobs"][0]["cached"] is False


def test_served_from_cache_needs_every_sampler_and_bcg_node_cached():
    workflow = json.loads(EXAMPLE.read_text())
    sessions = [{"node_ids": ["7", "8"]}]

    def entry(nodes):
        return {"status": {"messages": [["execution_cached", {"nodes": nodes}]]}}

    assert status.served_from_cache(entry(list(workflow)), workflow, sessions)
    assert not status.served_from_cache(entry(["1", "2", "3", "4", "7", "8"]), workflow, sessions), "the sampler ran"
    assert not status.served_from_cache(entry(["1", "2", "3", "4", "10"]), workflow, sessions), "BCG's nodes ran"
    assert status.served_from_cache(entry(["10"]), workflow, []), "no session known yet: the samplers decide"
    assert not status.served_from_cache({"status": {"messages": []}}, workflow, sessions), "no message: nothing known"


# --------------------------------------------------------------------------------------- errors
def test_each_error_is_printed_once_and_readable(tmp_path, capsys, fakes):
    a = fakes()
    out_path = tmp_path / "results.json"
    spec = write_spec(tmp_path, prompts=["MISSING a", "MISSING b", "fine", "BOOM"], seeds=[1])
    rc, out, err = run(capsys, "--job", spec, "--server", a.url, "--out", out_path, *FAST)
    assert rc == 1
    assert (out + err).count("unet_name: 'flux.safetensors' not in []") == 1, out + err
    assert (out + err).count("node 10 (KSampler): boom") == 1, out + err
    assert "{" not in out + err, "no raw JSON"
    jobs = {j["prompt"]: j for j in results(out_path)["jobs"]}
    readable = ("400 from /prompt: node 1 (UNETLoader): Value not in list: unet_name: 'flux.safetensors' not in []; a file the "
                "workflow names (a model?) is not on that server: add it to its models folder or change the workflow")  # fmt: skip
    assert (
        jobs["MISSING a"]["error"]
        == jobs["MISSING b"]["error"]
        == f"refused by {comfy_http.server_label(a.url)}: {readable}"
    )
    first, second = sorted(
        (jobs["MISSING a"]["key"], jobs["MISSING b"]["key"]), key=lambda k: out.index(f" {k} FAILED")
    )
    assert f"{second} FAILED: the same error as {first} (above)" in out
    assert "3 job(s) failed for good: " in out and "(the errors are above)" in out


def test_comfy_error_text_without_node_errors_and_not_json():
    assert (
        comfy_http.comfy_error_text('{"error": {"message": "Prompt has no outputs", "details": ""}, "node_errors": {}}')
        == "Prompt has no outputs"
    )
    assert comfy_http.comfy_error_text("<html>bad gateway</html>") == "<html>bad gateway</html>"
    assert comfy_http.comfy_error_text({"error": "no prompt", "node_errors": {}}) == "no prompt"


def test_nothing_but_the_ray_runner_imports_ray():
    """ray is optional: the pack and the single-machine client must not need it."""
    allowed = {ROOT / "scripts" / "bcg_ray.py", ROOT / "tests" / "unit" / "test_bcg_ray.py", ROOT / "tests" / "e2e" / "test_ray_runner.py",
               *(ROOT / "bcg_client" / "on_ray").glob("*.py")}  # fmt: skip
    for path in ROOT.rglob("*.py"):
        if path in allowed or any(part.startswith(".") for part in path.relative_to(ROOT).parts):
            continue
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines()]
        assert not any(line.startswith(("import ray", "from ray")) for line in lines), path
