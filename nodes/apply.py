"""BCG Apply: MODEL -> MODEL whose DiT calls replay captured graphs (captured on their first call,
or by BCG Warmup Capture)."""

from comfy_api.latest import io

from ..bcg_runtime.comfy import api
from ..bcg_runtime.comfy.session import CapturePolicy, Mode


class BCGApply(io.ComfyNode):
    @classmethod
    def define_schema(cls) -> io.Schema:
        return io.Schema(
            node_id="BCGApply",
            display_name="BCG Apply",
            category="advanced/model",
            description=(
                "Replays the diffusion model's forward as CUDA graphs: each shape is captured on its first "
                "call (or by BCG Warmup Capture) and replays once proven bit-equal to eager; other calls run "
                "as usual and are reported. Same pixels as without it."
            ),
            inputs=[
                io.Model.Input("model"),
                io.Combo.Input(
                    "mode",
                    options=[m.value for m in Mode],
                    default=Mode.AUTO.value,
                    tooltip="auto: full where the model allows it, else breakable. "
                    "full: the whole forward is one graph (fastest, least memory). "
                    "breakable: attention runs eagerly between graph segments (more graph memory). "
                    "fast: the repeated blocks are torch.compile'd once and captured as one graph: faster kernels, "
                    "NOT bit-exact to eager (the warm-up report shows the difference); compiles on first use.",
                ),
                io.Int.Input(
                    "memory_budget_mb",
                    default=0,
                    min=0,
                    max=1 << 20,
                    step=256,
                    tooltip="Graph memory cap (MiB): past it, 'on first call' evicts the least recently used "
                    "graphs and 'warm-up only' stops capturing. 0: half of the VRAM free after the model loads.",
                ),
                io.Boolean.Input(
                    "verify",
                    default=False,
                    tooltip="Compare replay with eager on the first replayed step of each shape and log the difference.",
                ),
                io.Combo.Input(
                    "capture",
                    options=[p.value for p in CapturePolicy],
                    default=CapturePolicy.ON_FIRST_CALL.value,
                    optional=True,  # workflows saved before this input existed still validate
                    tooltip="on first call: each new shape is captured the first time the sampler sends it "
                    "(that step runs eager plus a capture) and replays from the next step; no list to keep in sync. "
                    "warm-up only: only BCG Warmup Capture captures.",
                ),
            ],
            outputs=[io.Model.Output()],
            hidden=[io.Hidden.unique_id],
        )

    @classmethod
    def execute(
        cls, model, mode: str, memory_budget_mb: int = 0, verify: bool = False, capture: str = CapturePolicy.ON_FIRST_CALL.value
    ) -> io.NodeOutput:
        node_id = getattr(getattr(cls, "hidden", None), "unique_id", None)
        return io.NodeOutput(api.apply(model, mode, memory_budget_mb, verify, node_id=node_id, capture=capture))
