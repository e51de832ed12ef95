"""Run a BCG job spec on a Ray cluster: one actor per ComfyUI server, one Ray task per job.

For batches that outgrow one machine (for one server, scripts/bcg_client.py is simpler and needs
nothing installed). Needs ``pip install ray``; neither the pack nor bcg_client.py imports it.

* Each ComfyUI server is an actor: given by URL (``--servers``), and/or started by the runner
  (``--comfyui PATH --gpus N``: N servers, one GPU each, on any node of the cluster with a free GPU;
  ComfyUI must be at PATH on every node; ``--comfy-args`` go to its main.py; ``--cpu`` starts
  them without a GPU, one CPU each).
* Each job of the spec (bcg_client.py's format: ``python scripts/bcg_client.py --help``) is a Ray
  task that takes a free server from the pool actor, queues its prompt there and waits for it. A
  server that stops answering for ``--lost-after`` seconds, whose actor died, or that lost the
  prompt (restarted) makes the task fail; Ray retries it (up to ``--retries`` times) and the pool
  hands it another server (one it was not lost on, when there is one). A prompt ComfyUI refuses or
  whose execution fails is failed for good, not retried.
* At most ``--in-flight`` tasks per server are outstanding. The results JSON (``--out``, the
  client's format: one record per job whatever the retries, each attempt in it) is written after
  every job; ``--images`` saves the images (fetched by the actor, written here under the client's
  names); ``--resume`` skips the jobs a results file has done. Each job prints a progress line:
  ComfyUI's execution time ("run"), the time from submission, BCG's line, the rate and what is left.
* At the end, the DiT calls replayed as CUDA graphs and those that ran eager are summed per server
  (the difference of GET /bcg/status over the batch) and overall.

Without ``--address`` the runner starts a Ray of its own on this machine (on 127.0.0.1 only);
``--address auto`` joins the cluster of ``ray start``. Ray ships the ``bcg_client`` package to the
workers, so other nodes need only ComfyUI (for --comfyui) and ray.

Examples::

    python scripts/bcg_ray.py --job spec.json --servers http://gpu0:8188,http://gpu1:8188 --out results.json
    python scripts/bcg_ray.py --address auto --job spec.json --comfyui /opt/ComfyUI --gpus 8 \\
        --out results.json --images images

The exit status is 1 if any job failed for good (or the input was bad), 0 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import ray

from ..cli import notes_text, positive
from ..errors import ClientError
from ..files import check_folder
from ..jobs import load_spec
from ..results import apply_resume
from . import RUNTIME_ENV
from .runner import Runner, make_pool, start_servers


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument(
        "--job", type=Path, required=True, metavar="SPEC", help="job spec JSON (bcg_client.py --help describes it)"
    )
    parser.add_argument("--servers", metavar="URL1,URL2", help="ComfyUI servers to use (one per GPU)")
    parser.add_argument(
        "--comfyui", type=Path, metavar="PATH", help="start servers: ComfyUI's folder (the same on every node)"
    )
    parser.add_argument(
        "--gpus",
        type=positive(int),
        default=1,
        help="with --comfyui: servers to start, one GPU each (default %(default)s)",
    )
    parser.add_argument(
        "--cpu", action="store_true", help="with --comfyui: servers without a GPU (ComfyUI's --cpu), one CPU each"
    )
    parser.add_argument("--comfy-args", default="", help="with --comfyui: more arguments for ComfyUI's main.py")
    parser.add_argument("--address", help="Ray cluster to join (e.g. auto); default: a Ray of its own on this machine")
    parser.add_argument(
        "--set", action="append", default=[], metavar="ID.INPUT=VALUE", help="override a node input (repeatable)"
    )
    parser.add_argument("--out", type=Path, help="the results JSON (default: the --resume file, else bcg_results.json)")
    parser.add_argument("--images", type=Path, metavar="DIR", help="also save the images into DIR")
    parser.add_argument("--resume", type=Path, metavar="RESULTS", help="skip the jobs this results JSON has done")
    parser.add_argument(
        "--in-flight", type=positive(int), default=2, help="prompts queued per server (default %(default)s)"
    )
    parser.add_argument(
        "--retries", type=positive(int), default=3, help="Ray retries of a lost job (default %(default)s)"
    )
    parser.add_argument("--timeout", type=positive(float), default=600, help="seconds a job may take on a server, and that all "
                                                                              "servers may be down (default %(default)s)")  # fmt: skip
    parser.add_argument("--lost-after", type=positive(float), default=30, help="seconds a server may not answer before its job "
                                                                                "moves (default %(default)s)")  # fmt: skip
    parser.add_argument("--poll", type=positive(float), default=0.5, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    """The CLI; 0 when every job is done, 1 on bad input, a write failure or any job failed."""
    args = build_parser().parse_args(argv)
    try:
        if not args.servers and not args.comfyui:
            raise ClientError(
                "give the servers with --servers URL1,URL2 and/or have them started with --comfyui PATH --gpus N"
            )
        if args.comfyui and not (args.comfyui / "main.py").is_file():
            raise ClientError(f"--comfyui {str(args.comfyui)!r}: no main.py there; give ComfyUI's folder")
        spec = load_spec(args.job, args.set)
        skipped, kept = apply_resume(spec.jobs, args.resume) if args.resume else (0, [])
        if args.images is not None:
            check_folder(args.images, "--images")
    except (ClientError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    started_ray = not ray.is_initialized()
    if started_ray:
        local = {} if args.address else {"_node_ip_address": "127.0.0.1", "include_dashboard": False}
        ray.init(address=args.address, log_to_driver=False, runtime_env=RUNTIME_ENV, **local)
    servers, runner = {}, None
    try:
        servers = start_servers(args, report=lambda line: print(line, flush=True))
        meta = {"spec": str(args.job), "workflow": str(spec.workflow_path), "runner": "ray"}
        runner = Runner(args, spec.jobs, kept, meta, servers, report=lambda line: print(line, flush=True))
        runner.save()  # an unwritable --out stops here, before any prompt
        resumed = f"; {skipped} already done in {args.resume}" if args.resume else ""
        print(f"{notes_text(spec.notes)}{len(spec.jobs)} job(s) ({spec.shape}){resumed}; {sum(j.status == 'pending' for j in spec.jobs)} "
              f"to run on {len(servers)} server(s) as Ray tasks: {', '.join(servers)}", flush=True)  # fmt: skip
        runner.run(make_pool(servers, args))
        runner.finish()
        runner.save()
    except (ClientError, RuntimeError, ray.exceptions.RayError) as e:
        text = str(e).strip()
        print(f"error: {text.splitlines()[-1] if text else type(e).__name__}", file=sys.stderr)
        return 1
    finally:
        for server in servers.values():
            try:
                ray.get(server.stop.remote(), timeout=60)
            except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError):
                pass
        if started_ray:
            ray.shutdown()
    for line in runner.summary():
        print(line)
    return 1 if any(j.status == "failed" for j in spec.jobs) else 0
