"""The headless client: runs batches of prompts on ComfyUI servers and reports what BCG replayed.

Standard library only (plus the warm-up plan's size parser, ``bcg_runtime.plan``, which is too);
the pack never imports it. One job per module:

- ``cli``: the command line (``python scripts/bcg_client.py`` or ``python -m bcg_client``), whose
  help documents the job spec and the results JSON;
- ``comfy_http``: ComfyUI's HTTP API (queue, history, /view, /bcg/status) and its error answers;
- ``workflow``: editing API-format workflows (the nodes a job changes, ``NODE_ID.INPUT`` overrides);
- ``jobs``: job specs and the quick CLI's options into jobs, each with its key;
- ``status``: BCG's replayed / eager totals between GET /bcg/status snapshots, cached prompts;
- ``batch``: the single-machine scheduler (one thread per server, recovery, resubmission);
- ``results``: the results JSON, its closing report and ``--resume``;
- ``files``: names derived by the client only, atomic writes, JSON reads;
- ``errors``: the one-line errors;
- ``on_ray``: the same job specs on a Ray cluster (``scripts/bcg_ray.py``; needs ``pip install ray``).

Nothing is imported here, so a module's users (the Ray workers, the tests) load only what they use.
"""
