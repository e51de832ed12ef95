"""ComfyUI-BCG prestartup: run PyTorch's native CUDA allocator instead of cudaMallocAsync.

ComfyUI runs ``custom_nodes/<pack>/prestartup_script.py`` after it has set
``PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync`` (its NVIDIA default) and before it imports
torch. BCG's CUDA graphs need the native allocator, so this removes that entry (see
``bcg_runtime/allocator_env.py``) and logs one ``[BCG]`` line saying so. Set
``BCG_KEEP_CUDA_MALLOC_ASYNC=1`` to keep cudaMallocAsync; BCG then leaves every model unchanged.

ComfyUI executes this file alone (``importlib.util.spec_from_file_location``), not as part of
the pack's package, so the helper is loaded by its path; nothing here imports torch or ComfyUI,
and nothing here raises into ComfyUI's startup.
"""

import importlib.util
import logging
import os
import sys


def _load_allocator_env():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bcg_runtime", "allocator_env.py")
    spec = importlib.util.spec_from_file_location("bcg_prestartup_allocator_env", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _main():
    try:
        _load_allocator_env().prestartup(os.environ, sys.modules)
    except Exception:  # a prestartup failure must not stop ComfyUI; the allocator stays as it was
        logging.getLogger("bcg_runtime.allocator_env").exception(
            "[BCG] prestartup script failed; the allocator settings are unchanged (BCG stays off under cudaMallocAsync)"
        )


_main()
