"""CogVideoX (``comfy.ldm.cogvideo.model.CogVideoXTransformer3DModel``, ``model_base.CogVideoX``;
``CogVideoX_T2V``, ``CogVideoX_I2V``, ``CogVideoX_Inpaint``), ComfyUI 0.33.0 only (0.8.0 has no
such class: its tests skip there).

One forward serves the three config classes; they differ in the channels of ``x`` (16, 32 with
the start image, 48 with the masked video and its mask), built by ``concat_cond`` before the call.
Latents are 5-D at 8x spatial and 4x temporal; labels count pixel frames. Nothing is keyed beyond
the tensors' shapes (CogVideoX 1.5 I2V's ``ofs`` is a tensor argument, in the key by shape and
presence) and nothing is refused. Text: the T5-XXL tokenizer pads every prompt to at least 226
tokens and no mask reaches the DiT, so prompts of up to 226 tokens share one graph and cond and
uncond batch into one call. Positions and timestep embeddings are made on the device from Python
numbers (nothing copied from the host): no op syncs with the host, so mode 'full' is safe. This
module is the text-to-video family; ``cogvideox_i2v.py`` and ``cogvideox_inpaint.py`` are the
other two classes'. Source audit: tests/comfy/test_cogvideox.py.
"""

from .base import ModelAdapter, WarmupFacts

#: Tokens every prompt of up to 226 tokens reaches the DiT with (the tokenizer's ``min_length``).
T5_MIN_LENGTH = 226


class CogVideoXAdapter(ModelAdapter):
    def text_length_seen(self, tokens: int) -> int:
        """226 for every prompt of up to 226 tokens; longer prompts keep their length."""
        return max(T5_MIN_LENGTH, tokens)


ADAPTER = CogVideoXAdapter(
    family="cogvideox",
    display_name="CogVideoX",
    config_classes=("CogVideoX_T2V", "CogVideoX_I2V", "CogVideoX_Inpaint"),
    max_text_length=1024,
    text_policy="natural buckets, exact: T5-XXL pads every prompt to 226 tokens (longer prompts keep their length)",
    latent_scale=8,
    temporal_scale=4,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=4096,
    pooled_dim=None,
    default_cond_length=T5_MIN_LENGTH,
    latent_channels=16,
)
