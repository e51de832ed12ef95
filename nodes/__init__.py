"""ComfyUI nodes of the pack (V3 API). Imported only by ``comfy_entrypoint``, inside ComfyUI."""

from comfy_api.latest import ComfyExtension, io
from typing_extensions import override

from bcg_runtime.comfy.api import register_routes

from .apply import BCGApply
from .warmup import BCGWarmupCapture


class BCGExtension(ComfyExtension):
    @override
    async def on_load(self) -> None:
        register_routes()

    @override
    async def get_node_list(self) -> list[type[io.ComfyNode]]:
        # ComfyUI 0.8 calls only get_node_list, before its server freezes the routes; registering
        # here (once; a no-op without a server) also covers loaders that skip on_load.
        register_routes()
        return [BCGApply, BCGWarmupCapture]


__all__ = ["BCGApply", "BCGExtension", "BCGWarmupCapture"]
