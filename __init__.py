"""ComfyUI-BCG: breakable CUDA graph replay for ComfyUI's diffusion transformers.

ComfyUI loads this file as the pack's package, named after its folder. It exports only
``comfy_entrypoint`` and ``WEB_DIRECTORY``: exporting ``NODE_CLASS_MAPPINGS`` as well would make
ComfyUI take its V1 branch and never call the entrypoint. Nothing here imports ComfyUI at import
time, so the pack can be imported (and tested) where ComfyUI is absent.

The runtime is imported under one name, ``bcg_runtime``, whatever the folder is called: the nodes,
the benchmark, the tests and the scripts all import that name, so its module state (sessions,
invalidations, registered routes) exists once per process.
"""

import importlib.util
import os
import sys

WEB_DIRECTORY = "./web"

__all__ = ["comfy_entrypoint", "WEB_DIRECTORY"]

RUNTIME = "bcg_runtime"


def _import_runtime():
    """``bcg_runtime`` from this folder, registered under that name (and only that name: the folder
    itself is not put on ``sys.path``, where its ``nodes`` and ``tests`` would meet ComfyUI's).
    ImportError when a ``bcg_runtime`` from another folder was imported first (a second copy of the
    pack in custom_nodes), which ComfyUI reports as this pack failing to load."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), RUNTIME)
    loaded = sys.modules.get(RUNTIME)
    if loaded is not None:
        where = os.path.dirname(os.path.realpath(getattr(loaded, "__file__", "") or ""))
        if where != os.path.realpath(folder):
            raise ImportError(
                f"[BCG] {RUNTIME} is already imported from {where}: is ComfyUI-BCG installed twice? keep one copy"
            )
        return loaded
    spec = importlib.util.spec_from_file_location(
        RUNTIME, os.path.join(folder, "__init__.py"), submodule_search_locations=[folder]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[RUNTIME] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[RUNTIME]
        raise
    return module


_import_runtime()


async def comfy_entrypoint():
    """Called by ComfyUI's loader; returns the pack's ``ComfyExtension``."""
    from bcg_runtime.comfy.host_version import report_running_host
    from bcg_runtime.comfy.startup import report_process

    from .nodes import BCGExtension

    report_running_host()  # one INFO line when ComfyUI is newer than the newest tested version
    report_process()  # one WARNING line when BCG cannot run in this process (--cpu, no CUDA, ...)
    return BCGExtension()
