"""ComfyUI nodes of the pack (V3 API). Imported only by ``comfy_entrypoint``, inside ComfyUI."""

from typing_extensions import override

from comfy_api.latest import ComfyExtension, io

from .apply import BCGApply
from .warmup import BCGWarmupCapture


class BCGExtension(ComfyExtension):
    @override
    async def get_node_list(self) -> list[type[io.ComfyNode]]:
        return [BCGApply, BCGWarmupCapture]


__all__ = ["BCGApply", "BCGExtension", "BCGWarmupCapture"]
