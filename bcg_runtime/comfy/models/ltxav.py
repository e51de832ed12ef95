"""LTX-2 and LTX-2.3 (``comfy.ldm.lightricks.av_model.LTXAVModel``; ``LTXAV``), joint audio-video.

Keyed: the DiT receives ``x`` as ``[video, audio]`` and ``timestep`` as ``(video, audio)`` (the
sampler's packed NestedTensor, unpacked by ``BaseModel._apply_model``): every shape of both streams
is in the key and the label names both (``768x512x121f a121 txt1024 b2``); ``frame_rate`` (a Python
number scaling the RoPE time axes) too. Text: natural buckets, exact: the embeddings connectors
(in ``extra_conds``, before the DiT) append learned registers up to at least 1024 tokens in whole
tiles of 128, so cond and uncond share one graph as stock ComfyUI computes them. Refused (eager, a
graph cannot replay them): a denoise mask (the forward compares each frame's mask min and max on
the host), ID-LoRA reference audio (``.item()``), LTXV keyframe guides. Constant host tensors the
forward copies to the device each call (coordinate and RoPE grids from the config and shapes) are
staged through pinned buffers (``stage_host_copies``). No other host sync: mode 'full' is safe.
The source audit: ``tests/comfy/test_ltxav.py``.
"""

import dataclasses
from typing import Any

from .base import ModelAdapter, WarmupFacts
from .ltxv import KEYFRAME_REFUSAL

#: Why a call with a noise mask (image-to-video, inpainting) runs eager.
DENOISE_MASK_REFUSAL = (
    "LTX-2 with a noise mask (image-to-video, inpainting): the forward compares each latent frame's "
    "mask min and max on the host (has_spatial_mask), which a graph would freeze; running eager"
)
#: Why a call with ID-LoRA reference audio runs eager.
REF_AUDIO_REFUSAL = (
    "LTX-2 with reference audio (ID-LoRA ref_audio): the forward reads the reference's end time "
    "from the device with .item(), a host sync no graph can replay; running eager"
)


class LTXAVAdapter(ModelAdapter):
    #: The embeddings connectors append learned registers up to at least this many tokens, in
    #: whole tiles of their 128 registers (0.33.0 ``embeddings_connector.py:282-290``).
    CONNECTOR_MIN_LENGTH = 1024
    CONNECTOR_REGISTERS = 128

    def text_length_seen(self, tokens: int) -> int:
        tiles = -(-max(self.CONNECTOR_MIN_LENGTH, tokens) // self.CONNECTOR_REGISTERS)
        return tiles * self.CONNECTOR_REGISTERS

    def for_model(self, model_patcher):
        """LTX-2's encoder output is 3840 wide (Gemma's single projection, split by the connectors);
        LTX-2.3's 6144 (dual projection: 4096 video + 2048 audio, ``caption_proj_before_connector``)."""
        dm = getattr(getattr(model_patcher, "model", None), "diffusion_model", None)
        if dm is None or not hasattr(dm, "caption_channels"):
            return self
        joint = getattr(dm, "caption_proj_before_connector", False)  # 0.8.0's class has no such option
        width = dm.cross_attention_dim + dm.audio_cross_attention_dim if joint else dm.caption_channels
        return self if width == self.text_dim else dataclasses.replace(self, text_dim=width)

    def refusal(self, call: dict[str, Any]) -> str | None:
        if call.get("keyframe_idxs") is not None:
            return KEYFRAME_REFUSAL
        if call.get("denoise_mask") is not None:
            return DENOISE_MASK_REFUSAL
        if call.get("ref_audio") is not None:
            return REF_AUDIO_REFUSAL
        return None

    def label(self, call: dict[str, Any]) -> str:
        """``WIDTHxHEIGHTxFRAMESf aN txtN bB``: the video's pixel size and frames, the audio
        latent's length (``a0``: no audio stream), the context length and the batch."""
        x = call.get("x")
        if not isinstance(x, (list, tuple)) or not x or not hasattr(x[0], "shape"):
            return super().label(call)
        video = x[0]
        audio = x[1].shape[2] if len(x) > 1 and hasattr(x[1], "shape") and x[1].dim() == 4 else 0
        base = super().label({**call, "x": video})
        size, _, rest = base.partition(" ")
        return f"{size} a{audio} {rest}"


ADAPTER = LTXAVAdapter(
    family="ltxav",
    display_name="LTX-2",
    config_classes=("LTXAV",),
    max_text_length=2048,
    text_policy="natural buckets, exact: the embeddings connectors pad every prompt to 1024 tokens with learned registers (longer prompts keep their length)",
    latent_scale=32,
    temporal_scale=8,
    stage_host_copies=True,
    # LTX-2.3's float64 RoPE frequencies (``frequencies_precision``): ``generate_freq_grid_np`` (model.py:625,
    # an lru_cache) returns a host tensor copied to the device each call. On the CPU stand-in that host
    # tensor is outside memory the graph reads; on CUDA the copy is staged (host_copies) and no device
    # memory is read outside.
    outside_reads=(
        (
            ("aten.to.dtype_layout", "float32", "cpu"),
            "generate_freq_grid_np's lru-cached host table of RoPE frequencies: values from the config alone; "
            "read in place only where the model runs on the host (on CUDA its copy to the device is staged)",
        ),
    ),
    gpu_verified=False,
    opt_in_reason=(
        "LTX-2 is off by default: under cuDNN's attention first (a stock server's order) its own eager "
        "forward does not always repeat itself, so no graph can be proven equal to it (docs/models.md)"
    ),
    gpu_pending=(
        "every full-size case passes (both modes, 512² and 1024², cfg 1 and 2.5, under inference mode), in a fresh "
        "process on the H200 and after the runtime tests in one process under the SDPA order the tests settle (H100, "
        "2026-12-06; LTX-2.3 too); with cuDNN's attention first (a stock server's order) eager itself does not "
        "always repeat: the audio stream's cross-attention (one query per head over 1,024 text keys) served by "
        "cuDNN's attention gave another output for equal inputs, after CUDA graph work in the process, while plain "
        "torch on those shapes repeats itself 1,000 calls in a row (docs/benchmarks.md, the LTX-2 row); the "
        "cuDNN-first eager repeat over all 56 families parts for LTX-2 and LTX-2.3 alone, on that call (H100, "
        "2026-12-06): no graph can be proven equal to an eager that does not repeat"
    ),
    text_dim=3840,
)

#: The audio latent's frames per second (16 kHz, mel hop 160, 4x latent downsampling: 25), and
#: the frame rate the synthetic workflow's empty audio latent is made for (LTXVEmptyLatentAudio).
AUDIO_LATENTS_PER_SECOND = 25.0
FRAME_RATE = 25.0


def audio_latent_shape(facts, batch, frames):
    """``LTXVEmptyLatentAudio``'s latent for ``frames`` pixel frames at :data:`FRAME_RATE`:
    ``[batch, 8, round(frames / fps * 25), 16]`` (at least one latent)."""
    return (batch, 8, max(1, round((frames or 1) / FRAME_RATE * AUDIO_LATENTS_PER_SECOND)), 16)


def ltxav_extras(facts, batch, length, generator, guidance):
    """CLIPTextEncode with the LTX-2 Gemma 3 encoder: the prompt's tokens, no pooled output, no
    mask, flagged for the DiT's embeddings connectors (``unprocessed_ltxav_embeds``)."""
    return {"pooled_output": None, "unprocessed_ltxav_embeds": True}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=3840,
    pooled_dim=None,
    default_cond_length=1024,
    latent_channels=128,
    conditioning_extras=ltxav_extras,
    second_stream_shape=audio_latent_shape,
)
