"""Tools beside the product: the benchmarks and the random-weight checkpoint builder.

``python -m bench`` (``cli``: arguments and output; ``setup``: ComfyUI and the model; ``modes``:
what each mode stacks and runs; ``measure``: one row per mode; ``report``: rows, tables, JSON),
``python -m bench.batch``, ``python -m bench.compiler``, ``python -m bench.table``. The tests build
their models with ``synthetic``. These modules import the product (``bcg_runtime``); the product
never imports them (tests/unit/test_trees_and_layout.py).
"""
