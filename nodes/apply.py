"""BCG Apply: MODEL -> MODEL whose DiT calls replay captured graphs (captured on their first call,
or by BCG Warmup Capture)."""

from comfy_api.latest import io

from bcg_runtime.comfy import api
from bcg_runtime.comfy.api import CapturePolicy, InputError, Mode

from .input_error import blocked
from .schema import CATEGORY, SEARCH_ALIASES, schema


class BCGApply(io.ComfyNode):
    @classmethod
    def define_schema(cls) -> io.Schema:
        return schema(
            node_id="BCGApply",
            display_name="BCG Apply",
            category=CATEGORY,
            search_aliases=SEARCH_ALIASES,
            description=(
                "Speeds up sampling by replaying the diffusion model's forward as CUDA graphs (NVIDIA GPUs): "
                "each shape is captured on its first call (or by BCG Warmup Capture) and replays once proven "
                "bit-equal to eager; other calls run as usual, with the reason in the badge and the log. "
                "Same pixels as without it (except mode fast)."
            ),
            inputs=[
                io.Model.Input("model"),
                io.Combo.Input(
                    "mode",
                    options=[m.value for m in Mode],
                    default=Mode.AUTO.value,
                    tooltip="auto: full where the model allows it (every supported family), else breakable. "
                    "full: the whole forward is one graph. "
                    "breakable: attention runs eagerly between graph segments (about the graph memory of full). "
                    "fast: the repeated blocks are torch.compile'd once and captured as one graph: faster kernels, "
                    "NOT bit-exact to eager (the warm-up report shows the difference); compiles on first use, 10-40 s.",
                ),
                io.Int.Input(
                    "memory_budget_mb",
                    default=0,
                    min=0,
                    max=1 << 20,
                    step=256,
                    tooltip="Graph memory cap (MiB): past it, 'on first call' evicts the least recently used "
                    "graphs and 'warm-up only' stops capturing. 0 (default): half of the VRAM free once the model is loaded.",
                ),
                io.Boolean.Input(
                    "verify",
                    default=False,
                    tooltip="Also run eager on the first replayed step of each shape, compare and log the difference; "
                    "a replay that differs is dropped (that step costs one more eager run).",
                ),
                io.Combo.Input(
                    "capture",
                    options=[p.value for p in CapturePolicy],
                    default=CapturePolicy.ON_FIRST_CALL.value,
                    optional=True,  # workflows saved before this input existed still validate
                    tooltip="on first call: each new shape is captured the first time the sampler sends it "
                    "(that step runs eager plus a capture) and replays from the next step, where the steps left repay "
                    "the capture; no list to keep in sync. warm-up only: only BCG Warmup Capture captures; other shapes run eager.",
                ),
            ],
            outputs=[io.Model.Output()],
            hidden=[io.Hidden.unique_id],
        )

    @classmethod
    def execute(
        cls,
        model,
        mode: str,
        memory_budget_mb: int = 0,
        verify: bool = False,
        capture: str = CapturePolicy.ON_FIRST_CALL.value,
    ) -> io.NodeOutput:
        node_id = getattr(getattr(cls, "hidden", None), "unique_id", None)
        try:
            return io.NodeOutput(api.apply(model, mode, memory_budget_mb, verify, node_id=node_id, capture=capture))
        except InputError as error:  # a mode this model cannot take: one line on this node
            return blocked("BCG Apply", node_id, error)
