"""Tools beside the product: the benchmarks and the random-weight checkpoint builder.

``python -m bench`` (``cli``: arguments and output; ``setup``: ComfyUI and the model; ``modes``:
what each mode stacks and runs; ``measure``: one row per mode; ``report``: rows, tables, JSON),
``python -m bench.batch``, ``python -m bench.compiler``, ``python -m bench.table``, and
``python -m bench.server`` (the same workflow on a stock ``python main.py`` server, prompt after
prompt: ``server`` runs it, ``server_stats`` does the arithmetic, ``server_report`` the table;
``comfy_server``, ``comfy_base``, ``comfy_workflow`` and ``comfy_ws`` start and feed the server, and
the e2e tests use them too). The tests build their models with ``synthetic``. These modules import
the product (``bcg_runtime``); the product never imports them (tests/unit/test_trees_and_layout.py).
"""
