"""BCG Warmup Capture: MODEL -> MODEL + report, capturing every planned shape once."""

import comfy.utils
from comfy_api.latest import io

from bcg_runtime.comfy import api

from .input_error import blocked
from .schema import CATEGORY, SEARCH_ALIASES, schema


class BCGWarmupCapture(io.ComfyNode):
    @classmethod
    def define_schema(cls) -> io.Schema:
        return schema(
            node_id="BCGWarmupCapture",
            display_name="BCG Warmup Capture",
            category=CATEGORY,
            search_aliases=[*SEARCH_ALIASES, "warm up", "warmup", "precapture"],
            description=(
                "Captures CUDA graphs for each resolution x text length x batch by sampling one step of "
                "each through ComfyUI, and checks each replay equals eager, so even the first sampling step "
                "replays. Connect the workflow's conditioning and latent to capture exactly the calls its KSampler sends."
            ),
            inputs=[
                io.Model.Input("model", tooltip="A model from BCG Apply."),
                io.String.Input(
                    "resolutions",
                    default="1024x1024",
                    multiline=True,
                    tooltip="WIDTHxHEIGHT (multiples of 8), one per line or comma separated, e.g. 512x512, 1024x1024. "
                    "Video models: WIDTHxHEIGHTxFRAMES in pixel frames, e.g. 832x480x33. May be empty when latent is connected.",
                ),
                io.String.Input(
                    "text_buckets",
                    default="64,128,256,512,1024",
                    tooltip="Prompt lengths in tokens to capture, each from 1 to the model's longest context (at most 4096); "
                    "the report says how the model treats them. May be empty when conditioning is connected.",
                ),
                io.String.Input(
                    "batch_sizes",
                    default="1,2",
                    tooltip="DiT batch sizes (1 to 64): 1 = cfg 1 (or cond/uncond run apart), 2 = cond+uncond batched.",
                ),
                io.Conditioning.Input(
                    "positive", optional=True, tooltip="The workflow's positive prompt: its exact length is captured."
                ),
                io.Conditioning.Input("negative", optional=True, tooltip="The workflow's negative prompt (cfg > 1)."),
                io.Latent.Input(
                    "latent",
                    optional=True,
                    tooltip="The workflow's latent (the KSampler's latent_image): with positive/negative connected, "
                    "exactly the calls the KSampler will send are captured (size, batch, frames); resolutions may then be empty.",
                ),
            ],
            outputs=[io.Model.Output(), io.String.Output(display_name="report")],
            hidden=[io.Hidden.unique_id],
        )

    @classmethod
    def validate_inputs(cls, resolutions: str = "1024x1024"):
        """Judge ``resolutions`` from its text before anything runs (its syntax, sizes on the
        8-pixel grid); ComfyUI marks the input invalid with the message.

        ComfyUI attaches the message this returns to every input it takes as a parameter, so it
        takes one: a bad value marks that input alone. The other fields are judged when the node
        runs (before any work: ``api.warm_up`` parses them first), as is what depends on the model
        (frame counts, its longest text) or on what is connected (an empty ``resolutions`` with a
        latent, an empty ``text_buckets`` with conditioning); those stop the node with one line
        (``input_error.py``)."""
        return api.resolutions_error(resolutions) or True  # empty is allowed: a latent may be connected

    @classmethod
    def fingerprint_inputs(cls, **kwargs):
        # Re-run (re-capture) only after some model's weights moved; otherwise ComfyUI's cache holds.
        return api.invalidations()

    @classmethod
    def execute(
        cls, model, resolutions: str, text_buckets: str, batch_sizes: str, positive=None, negative=None, latent=None
    ) -> io.NodeOutput:
        node_id = getattr(getattr(cls, "hidden", None), "unique_id", None)
        bar = comfy.utils.ProgressBar(1)
        try:
            report = api.warm_up(
                model, resolutions, text_buckets, batch_sizes, positive, negative,
                node_id=node_id, progress=lambda i, n: bar.update_absolute(i, n), latent=latent,
            )  # fmt: skip
        except api.InputError as error:  # a field the model or the wiring cannot take: one line on this node
            return blocked("BCG Warmup Capture", node_id, error, ui_text=True)
        return io.NodeOutput(model, report.text(), ui={"text": (report.text(),)})
