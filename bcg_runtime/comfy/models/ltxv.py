"""LTX-Video (``comfy.ldm.lightricks.model.LTXVModel``; ``LTXV``), text-to-video and image-to-video.

Latents are 5-D ``[B, 128, T, H/32, W/32]``; labels count pixel frames. Beyond shapes the key holds
``frame_rate`` (a ``CONDConstant`` Python number that scales the RoPE time axis). Text: the LTXV T5
tokenizer pads every prompt to 128 tokens and its ``attention_mask`` reaches the DiT (a tensor
argument, values copied at every replay), so prompts of up to 128 tokens share one graph and cond
and uncond batch; longer prompts keep their length. Image-to-video's noise mask becomes per-token
timesteps (their shape in the key). Refused: keyframe guides (``keyframe_idxs``, :data:`KEYFRAME_REFUSAL`),
whose path selects tokens by the ``denoise_mask``'s values and counts them with ``.item()``. Staged
host copies (``stage_host_copies``): ``torch.tensor(list, device=...)`` in ``latent_to_pixel_coords``
and ``get_latent_coords``, the host-built index grid of ``precompute_freqs_cis`` and the float64
numpy frequency grid, all from the patch size, the VAE scale factors and the RoPE config (and
shapes in the key). No other host sync outside the keyframe path, so mode 'full' is safe. Source
audit: tests/comfy/test_ltxv.py.
"""

from typing import Any

import torch

from .base import ModelAdapter, WarmupFacts

#: Why a call with keyframe guides runs eager.
KEYFRAME_REFUSAL = (
    "LTXV keyframe guides (keyframe_idxs): the forward selects tokens by the denoise mask's values "
    "and counts them on the host, which a graph cannot replay"
)


class LTXVAdapter(ModelAdapter):
    T5_MIN_LENGTH = 128

    def text_length_seen(self, tokens: int) -> int:
        return max(self.T5_MIN_LENGTH, tokens)

    def refusal(self, call: dict[str, Any]) -> str | None:
        if call.get("keyframe_idxs") is not None:
            return KEYFRAME_REFUSAL
        return None


ADAPTER = LTXVAdapter(
    family="ltxv",
    display_name="LTX-Video",
    config_classes=("LTXV",),
    max_text_length=512,
    text_policy="natural buckets, exact: T5 pads every prompt to 128 tokens with a mask (longer prompts keep their length)",
    latent_scale=32,
    temporal_scale=8,
    stage_host_copies=True,
)


def _ltxv_extras(facts, batch, length, generator, guidance):
    """CLIPTextEncode with the LTXV T5-XXL: no pooled output; an attention mask over the padded
    context, ones for the prompt's tokens and zeros for the pads (a random prompt length, so two
    conditionings of one context length carry different masks, as two real prompts do)."""
    real = int(torch.randint(1, length + 1, (1,), generator=generator))
    mask = torch.zeros(batch, length, dtype=torch.long)
    mask[:, :real] = 1
    return {"pooled_output": None, "attention_mask": mask}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=4096,
    pooled_dim=None,
    default_cond_length=128,
    latent_channels=128,
    conditioning_extras=_ltxv_extras,
)
