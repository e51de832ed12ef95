"""ComfyUI-BCG: breakable CUDA graph replay for ComfyUI's diffusion transformers.

ComfyUI loads this file as the pack's package. It exports only ``comfy_entrypoint`` and
``WEB_DIRECTORY``: exporting ``NODE_CLASS_MAPPINGS`` as well would make ComfyUI take its V1 branch
and never call the entrypoint. Nothing here imports ComfyUI at import time, so the pack can be
imported (and tested) where ComfyUI is absent.
"""

WEB_DIRECTORY = "./web"

__all__ = ["comfy_entrypoint", "WEB_DIRECTORY"]


async def comfy_entrypoint():
    """Called by ComfyUI's loader; returns the pack's ``ComfyExtension``."""
    from .bcg_runtime.comfy.host_version import report_running_host
    from .bcg_runtime.comfy.startup import report_process
    from .nodes import BCGExtension

    report_running_host()  # one INFO line when ComfyUI is newer than the newest tested version
    report_process()  # one WARNING line when BCG cannot run in this process (--cpu, no CUDA, ...)
    return BCGExtension()
