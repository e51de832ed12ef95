"""The Ray runner (``bcg_client.on_ray``, run as scripts/bcg_ray.py) on a local Ray
(``ray.init(num_cpus=2)`` on 127.0.0.1) against the fake ComfyUI servers of test_bcg_client.py:
jobs spread as Ray tasks, a server stopped mid-job, a server's actor killed mid-job, results
exactly once. (tests/e2e/test_ray_runner.py does it with real ComfyUI servers.)

Skipped when ``ray`` is not importable (it is optional: ``pip install ray``)."""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from pathlib import Path

import pytest

# Before ray is imported: a local Ray on 127.0.0.1 only, and no usage report over the network.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
ray = pytest.importorskip("ray", reason="ray is not installed (optional: pip install ray to test scripts/bcg_ray.py)")

from bcg_client import comfy_http  # noqa: E402
from bcg_client import jobs as specs  # noqa: E402
from bcg_client.on_ray import RUNTIME_ENV  # noqa: E402
from bcg_client.on_ray import cli as runner  # noqa: E402
from test_bcg_client import FakeComfy, results, write_spec  # noqa: E402  (the fakes and helpers of the client tests)

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--poll", "0.02", "--lost-after", "0.5", "--timeout", "60"]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env=RUNTIME_ENV)
    yield
    ray.shutdown()


@pytest.fixture
def fakes():
    made = []

    def make(**kwargs) -> FakeComfy:
        made.append(FakeComfy(**kwargs))
        return made[-1]

    yield make
    for fake in made:
        fake.stop()


def run(capsys, *argv) -> tuple[int, str, str]:
    rc = runner.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


def test_the_runner_uses_the_clients_code_and_the_client_does_not_need_ray():
    assert runner.load_spec is specs.load_spec
    for path in (ROOT / "bcg_client").glob("*.py"):  # the client itself, without on_ray/
        source = path.read_text()
        assert "import ray" not in source and "from ray" not in source, path


def test_twenty_jobs_on_two_servers_one_stopped_mid_job_each_result_once(tmp_path, capsys, fakes, local_ray):
    stopped = threading.Event()

    def stop_at_third(fake, n):
        if n == 3:
            threading.Thread(target=lambda: (fake.stop(), stopped.set())).start()

    a = fakes(work_s=0.05)
    b = fakes(work_s=0.05, on_prompt=stop_at_third)  # dies with prompts queued and one running
    spec = write_spec(tmp_path, prompts=[f"p{i}" for i in range(5)], seeds=2, sizes=["64x64", "96x64"])
    out_path, images = tmp_path / "results.json", tmp_path / "images"
    rc, out, err = run(
        capsys, "--job", spec, "--servers", f"{a.url},{b.url}", "--out", out_path, "--images", images, *FAST
    )
    assert rc == 0, out + err
    assert stopped.is_set()
    doc = results(out_path)
    keys = [j.key for j in specs.load_spec(spec).jobs]
    assert len(keys) == 20 and sorted(j["key"] for j in doc["jobs"]) == sorted(keys), "every job exactly once"
    assert doc["done"] == 20 and all(j["status"] == "done" for j in doc["jobs"])
    moved = [j for j in doc["jobs"] if len(j["attempts"]) > 1]
    assert moved and all(j["attempts"][0]["server"] == b.url and j["server"] == a.url for j in moved)
    assert all("did not answer" in j["attempts"][0]["result"] for j in moved), [j["attempts"] for j in moved]
    assert doc["per_server"][b.url]["lost"] == len(moved)
    assert f"{comfy_http.server_label(b.url)}: not answering" in out and "[20/20] " in out
    # BCG totals: per server the /bcg/status difference, summed overall
    for url, fake in ((a.url, a), (b.url, b)):
        mine = [j for j in doc["jobs"] if j["server"] == url]
        small = sum(j["width"] == 64 for j in mine)
        assert doc["per_server"][url]["done"] == len(mine)
        if fake is a:
            assert doc["per_server"][url]["replayed"] == 4 * small and doc["per_server"][url]["calls"] == 4 * len(mine)
    assert doc["replayed"] == sum(s["replayed"] for s in doc["per_server"].values())
    assert doc["calls"] == sum(s["calls"] for s in doc["per_server"].values()) >= 4 * 20
    assert "BCG over 20 prompt(s): replayed " in out
    # images: fetched by the actors, written by the driver under the client's names
    saved = sorted(p.name for p in images.iterdir())
    assert len(saved) == 20 and saved == sorted(Path(j["images"][0]).name for j in doc["jobs"])
    assert all(name.endswith("_SaveImage_n12_0.png") for name in saved)


def test_a_servers_actor_killed_mid_job_its_jobs_rerun_on_the_other_each_result_once(tmp_path, fakes, local_ray):
    from bcg_client.on_ray.runner import Runner, make_pool, start_servers

    a, b = fakes(work_s=0.05), fakes(work_s=0.05)
    spec_path = write_spec(tmp_path, prompts=[f"p{i}" for i in range(5)], seeds=4)
    args = runner.build_parser().parse_args(
        [str(x) for x in ("--job", spec_path, "--servers", f"{a.url},{b.url}", "--out", tmp_path / "r.json", *FAST)]
    )
    spec = specs.load_spec(spec_path)
    servers = start_servers(args)
    lines = []

    def report(line: str) -> None:
        lines.append(line)
        if sum(x.startswith("[") for x in lines) == 3:  # a few jobs in: B's actor dies (B itself answers on)
            ray.kill(servers[b.url], no_restart=True)

    run = Runner(args, spec.jobs, [], {"spec": str(spec_path)}, servers, report=report)
    run.run(make_pool(servers, args))
    run.finish()
    doc = run.document()
    assert sorted(j["key"] for j in doc["jobs"]) == sorted(j.key for j in spec.jobs) and doc["done"] == 20, (
        "every job exactly once"
    )
    moved = [j for j in doc["jobs"] if any("actor of" in a.get("result", "") for a in j["attempts"])]
    assert moved and all(
        j["server"] == a.url and j["attempts"][-1] == {"server": a.url, "prompt_id": j["prompt_id"], "result": "done"}
        for j in moved
    )
    assert doc["per_server"][b.url]["lost"] == len(moved) and any(
        f"{comfy_http.server_label(b.url)}: its actor died" in x for x in lines
    )
    assert doc["per_server"][a.url]["done"] + doc["per_server"][b.url]["done"] == 20
    assert not [j for j in doc["jobs"] if j["server"] == b.url and j["status"] != "done"]


def test_refused_and_failing_jobs_fail_once_and_resume_runs_the_rest(tmp_path, capsys, fakes, local_ray):
    a = fakes()
    out_path = tmp_path / "results.json"
    spec = write_spec(tmp_path, prompts=["fine", "BOOM now", "REFUSE this"], seeds=[1])
    rc, out, _ = run(capsys, "--job", spec, "--servers", a.url, "--out", out_path, *FAST)
    assert rc == 1
    jobs = {j["prompt"]: j for j in results(out_path)["jobs"]}
    assert jobs["fine"]["status"] == "done"
    assert jobs["BOOM now"]["status"] == "failed" and "node 10 (KSampler): boom" in jobs["BOOM now"]["error"]
    assert jobs["REFUSE this"]["error"].startswith(
        f"refused by {comfy_http.server_label(a.url)}: 400 from /prompt: node 4"
    )
    assert (
        len(jobs["BOOM now"]["attempts"]) == 1
        and Counter(p["4"]["inputs"]["text"] for _, p in a.received)["BOOM now"] == 1
    )
    a.fail_texts = set()
    rc, out, _ = run(capsys, "--job", spec, "--servers", a.url, "--resume", out_path, *FAST)
    assert "1 already done" in out and "2 to run" in out
    jobs = {j["prompt"]: j for j in results(out_path)["jobs"]}
    assert jobs["BOOM now"]["status"] == "done" and jobs["fine"] == json.loads(json.dumps(jobs["fine"]))


def test_a_server_that_does_not_start_is_left_out_and_the_others_run_the_jobs(tmp_path, capsys, fakes, local_ray):
    a = fakes()
    broken = tmp_path / "ComfyUI"
    broken.mkdir()
    (broken / "main.py").write_text("import sys\nprint('no models folder')\nsys.exit(3)\n")
    out_path = tmp_path / "r.json"
    rc, out, err = run(
        capsys,
        "--job",
        write_spec(tmp_path, seeds=3),
        "--servers",
        a.url,
        "--comfyui",
        broken,
        "--cpu",
        "--out",
        out_path,
        *FAST,
    )
    assert rc == 0, out + err
    assert (
        f"server 1 of --comfyui {broken}: not started, left out (ComfyUI in {broken} exited with 3 while starting"
        in out
    )
    doc = results(out_path)
    assert doc["done"] == 3 and list(doc["per_server"]) == [a.url]


def test_bad_input_is_one_line(tmp_path, capsys):
    rc, _, err = run(capsys, "--job", write_spec(tmp_path))
    assert (
        rc == 1
        and "give the servers with --servers URL1,URL2 and/or have them started with --comfyui PATH --gpus N" in err
    )
