"""The client's job specs on a Ray cluster, for batches that outgrow one machine (``pip install
ray``; nothing else in the pack imports it). One job per module:

- ``server``: ``ComfyServer``, the actor of one ComfyUI server (given by URL, or started by it on
  the GPU Ray gave it): runs prompts there and keeps that server's BCG totals;
- ``pool``: ``Pool``, the actor that knows which servers are up and how busy, and hands each job a
  server (another one than those it was lost on, when there is one);
- ``task``: ``run_job``, one job as a Ray task: ``ServerLost`` when its server died or stopped
  answering, which Ray retries (the pool then hands it another server);
- ``runner``: the driver: submits the tasks, records each job's one result, writes the results
  JSON (the client's format), prints progress and the per-server and overall totals;
- ``cli``: the command line (``python scripts/bcg_ray.py`` or ``python -m bcg_client.on_ray``).

The workers import this package from the copy Ray ships to the cluster with the job
(``ray.init(runtime_env=RUNTIME_ENV)``: ``py_modules``), so the cluster's nodes need ComfyUI (when
the runner starts the servers) but not this checkout. A program that calls the runner after its
own ``ray.init`` passes that ``runtime_env`` itself.
"""

import os
from pathlib import Path

#: The job-level runtime_env of the runner: this package (``bcg_client``), shipped by Ray to every worker.
RUNTIME_ENV = {"py_modules": [str(Path(__file__).resolve().parents[1])]}


def local_ray_on_loopback(argv: list[str]) -> None:
    """Call before ``ray`` is imported: without ``--address`` in ``argv`` the runner starts a Ray of
    its own on this machine, and this makes that Ray (and the ComfyUI servers it starts) bind to
    127.0.0.1 instead of the machine's network address (Ray's own setting, the default on macOS and
    Windows). A cluster joined with ``--address`` is left as Ray sets it up."""
    if not any(a == "--address" or a.startswith("--address=") for a in argv):
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
