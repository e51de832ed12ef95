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
  sizes       a list of "WIDTHxHEIGHT" (multiples of 8, read as BCG Warmup Capture reads its
              resolutions); default: the workflow's own size
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
seconds (from its submission to its end), run_seconds (ComfyUI's own execution time, from the
history's timestamps: no queue wait), cached (ComfyUI served it from its cache: nothing sampled, so
no BCG counts),
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
``python -m bcg_client`` (from the pack's folder) is the same command. For many GPUs or machines,
scripts/bcg_ray.py runs the same job specs on a Ray cluster.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .batch import Batch, BatchConfig
from .comfy_http import check_reachable, parse_servers
from .errors import ClientError, WriteError, write_error
from .files import check_folder, write_json
from .jobs import SPEC_FIELDS, Job, legacy_jobs, load_spec, parse_resolutions
from .results import apply_resume, results_document, summary_lines
from .workflow import apply_sets, load_workflow

DEFAULT_WORKFLOW = Path(__file__).resolve().parents[1] / "scripts" / "bcg_api_example.json"
DEFAULT_SERVER = "http://127.0.0.1:8188"


def positive(kind):
    """An argparse type: ``kind`` (int: 0 or more; float: above 0), else a one-line usage error."""

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
    parser.add_argument(
        "--job", type=Path, metavar="SPEC", help="job spec JSON (format below): run prompts x seeds x sizes"
    )
    parser.add_argument("--server", default=DEFAULT_SERVER, help="ComfyUI address (default %(default)s)")
    parser.add_argument(
        "--servers", metavar="URL1,URL2", help="several ComfyUI servers (one per GPU); the jobs are spread over them"
    )
    parser.add_argument(
        "--workflow", type=Path, help="without --job: API-format workflow JSON (default: the pack's example)"
    )
    parser.add_argument("-n", "--count", type=positive(int), help="without --job: prompts to submit (default 4)")
    parser.add_argument(
        "--seed", type=int, help="without --job: seed of the first prompt; prompt i uses seed+i (default 0)"
    )
    parser.add_argument("--prompts", nargs="+", help="without --job: positive prompt texts, cycled over the runs")
    parser.add_argument("--resolutions", help="without --job: WIDTHxHEIGHT list, comma separated, cycled over the runs")
    parser.add_argument(
        "--set", action="append", default=[], metavar="ID.INPUT=VALUE", help="override a node input (repeatable)"
    )
    parser.add_argument("--out", type=Path, help="with --job: the results JSON (default: the --resume file, else bcg_results.json); "
                                                 "without: the folder for the images (default bcg_client_out)")  # fmt: skip
    parser.add_argument("--images", type=Path, metavar="DIR", help="with --job: also download the images into DIR")
    parser.add_argument(
        "--resume", type=Path, metavar="RESULTS", help="with --job: skip the jobs this results JSON has done"
    )
    parser.add_argument(
        "--in-flight", type=positive(int), default=2, help="prompts queued per server (default %(default)s)"
    )
    parser.add_argument(
        "--retries", type=positive(int), default=3, help="resubmissions of a lost job (default %(default)s)"
    )
    parser.add_argument("--timeout", type=positive(float), default=600, help="seconds a job may take from submission, and that all "
                                                                               "servers may be down (default %(default)s)")  # fmt: skip
    parser.add_argument("--lost-after", type=positive(float), default=30, help="seconds before a down server's jobs go to other "
                                                                                 "servers (default %(default)s)")  # fmt: skip
    parser.add_argument("--poll", type=positive(float), default=0.5, help=argparse.SUPPRESS)  # seconds between polls
    parser.add_argument(
        "--backoff", type=positive(float), default=1.0, help=argparse.SUPPRESS
    )  # first wait on a down server
    parser.add_argument("--json", type=Path, help="also write the results (totals and jobs) as JSON to this file")
    return parser


def check_modes(args: argparse.Namespace) -> None:
    """Options of one mode used in the other are errors that say where the value belongs."""
    legacy = {
        "--workflow": args.workflow,
        "-n": args.count,
        "--seed": args.seed,
        "--prompts": args.prompts,
        "--resolutions": args.resolutions,
    }
    if args.job:
        for option, value in legacy.items():
            if value is not None:
                raise ClientError(
                    f"{option}: not with --job; put it in the job spec (fields: {', '.join(SPEC_FIELDS)})"
                )
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
        return spec.jobs, meta, out, notes_text(spec.notes) + f"{len(spec.jobs)} job(s) ({spec.shape}){resumed}", kept
    workflow_path = args.workflow or DEFAULT_WORKFLOW
    workflow = load_workflow(workflow_path, "--workflow")
    apply_sets(workflow, args.set)
    notes: list[str] = []
    resolutions = parse_resolutions(args.resolutions, notes) if args.resolutions else None
    count = 4 if args.count is None else args.count
    jobs = legacy_jobs(workflow, count, args.seed or 0, args.prompts, resolutions)
    return (
        jobs,
        {"workflow": str(workflow_path)},
        None,
        notes_text(notes) + f"{count} prompt(s) of {workflow_path.name}",
        [],
    )


def notes_text(notes: list[str]) -> str:
    """The inputs read as meant (e.g. "sizes: '512' read as 512x512"), one ``note:`` line each."""
    return "".join(f"note: {note}\n" for note in notes)


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
            document = results_document(batch.jobs, batch.per_server(), {**meta, "servers": servers}, kept)
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
        again = (
            f"; {left} job(s) not done: fix it and run again with --resume {results_path}"
            if results_path and left
            else ""
        )
        print(f"error: {batch.fatal}{again}", file=sys.stderr)
        return 1
    document = results_document(batch.jobs, batch.per_server(), meta, kept)
    for line in summary_lines(document, batch.jobs, folder):
        print(line)
    if results_path is not None:
        print(f"results in {results_path}")
    if interrupted:
        print(f"interrupted: {document['pending']} job(s) not run; run again with --resume {results_path}" if results_path
              else "interrupted", file=sys.stderr)  # fmt: skip
        return 130
    return 1 if document["failed"] else 0
