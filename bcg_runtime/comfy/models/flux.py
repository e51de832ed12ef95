"""FLUX.1 dev / schnell (``comfy.ldm.flux.model.Flux``).

ComfyUI's T5 tokenizer pads every prompt to at least 256 tokens (``min_length=256``) with real,
unmasked pad tokens, so every prompt of up to 256 tokens reaches the DiT as a 256-long context:
one graph serves them all, exactly as stock ComfyUI computes them. Longer prompts arrive at their
exact length. No op in the forward syncs with the host.
"""

from .base import ModelAdapter


class FluxAdapter(ModelAdapter):
    T5_MIN_LENGTH = 256

    def text_length_seen(self, tokens: int) -> int:
        return max(self.T5_MIN_LENGTH, tokens)


ADAPTER = FluxAdapter(
    family="flux",
    display_name="FLUX.1",
    config_classes=("Flux", "FluxSchnell"),
    max_text_length=512,
    text_policy="natural buckets, exact: T5 pads every prompt to 256 tokens (longer prompts keep their length)",
)
