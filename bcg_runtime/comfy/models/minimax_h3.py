"""MiniMax H3 (``comfy.ldm.minimax.model.MiniMaxH3Model``; ``MiniMaxH3``, ComfyUI 0.33.0), joint
video + audio; ``_forward`` receives ``x = [video, audio]``, batch 1. One graph per sampling step:
the forward reads its step on the host (``t_v``, ``t_a``: floats of ``timestep.flatten()[0]``), so
:meth:`call_key` keys each call on that value (read before dispatch) and on ``minimax_payload`` by
value (:attr:`opaque_args`); ``shift_v`` / ``shift_a`` are keyed by options.py. Captures get the live
call's reads (``replay_host_reads``); host copies made from the keyed layout and step are staged
(``stage_host_copies``); a schedule replays from its second run (``keys_per_step``). Steps cannot
share a graph yet: the reads sit inline in ``_forward`` before the blocks, and an eager prologue
must be a part of the model the pack can call on its own (Z-Image's ``cap_embedder``), which the
rest of this forward is not. Refused: noise masks (:data:`DENOISE_MASK_REFUSAL`), keyframes and
references (:data:`CONDITIONS_REFUSAL`), unknown payload entries, and a final layer that picks heads
from the schedule (:data:`SCHEDULE_HEADS_REFUSAL`, a ``model_refusal``). Text: exact length. Every
host read, with why it is safe: :data:`HOST_READS`; the source audit: tests/comfy/test_minimax_h3.py.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from .base import ModelAdapter, WarmupFacts

#: Why a call with a noise mask runs eager.
DENOISE_MASK_REFUSAL = (
    "MiniMax H3 with a noise mask (image-to-video, inpainting): the forward reads the mask's values on "
    "the host (rows_t.unique(), .tolist()) to build its timestep rows, which a graph would freeze; running eager"
)
#: Why a call with keyframes or references runs eager.
CONDITIONS_REFUSAL = (
    "MiniMax H3 with keyframes or references (MiniMaxH3ImageToVideo, MiniMaxH3AddGuide): the forward "
    "builds their rows with seeded host noise and value-dependent layouts; running eager"
)
#: Why a model whose final layer picks its output heads from the sampler's schedule runs eager.
SCHEDULE_HEADS_REFUSAL = (
    "MiniMax H3 with a PDD head bank on a ComfyUI whose FinalLayer picks the output heads from the sampler's "
    "schedule (transformer_options['sample_sigmas'], the next sigma after this step, read on the host): two "
    "schedules that share a step would share a graph, and BCG keys only the step: the model runs unchanged"
)
#: Payload entries that put condition rows into the sequence.
_CONDITION_ENTRIES = ("keyframes", "refs", "cond_video_latents", "cond_audio_latents")
#: Pixel frames per latent frame, cycling (``MiniMaxH3AV.fix_empty_latent``: 1 + 4k, the 17k+5 grid).
FRAMES_PER_LATENT = (1, 4, 4, 4, 4)


def pixel_frames(latent_frames: int) -> int:
    """Pixel frames of a video latent of ``latent_frames`` frames (2 -> 5, 7 -> 22)."""
    return sum(FRAMES_PER_LATENT[i % len(FRAMES_PER_LATENT)] for i in range(latent_frames))


def reads_the_schedule(diffusion_model: Any) -> bool:
    """Whether this model's output depends on the sampler's whole schedule, not only the step in
    the key. ComfyUI 0.33.0's ``FinalLayer`` takes none; a later one (Comfy-Org/ComfyUI@2c64d4a,
    ``FinalLayer.forward(..., sigma, sample_sigmas, shifts)``) does, and for a checkpoint whose
    ``video_out`` holds a bank of heads (``weight.shape[0] // out_features > 1``) it picks and
    blends heads by where the step sits in ``sample_sigmas`` (the next sigma), on the host."""
    final = getattr(diffusion_model, "final_layer", None)
    head = getattr(final, "video_out", None)
    if final is None or head is None:
        return False
    if "sample_sigmas" not in inspect.signature(type(final).forward).parameters:
        return False
    weight, per_head = getattr(head, "weight", None), getattr(head, "out_features", None)
    return weight is None or not per_head or weight.shape[0] // per_head != 1


@dataclasses.dataclass(frozen=True)
class MiniMaxH3Adapter(ModelAdapter):
    #: A fact of the checkpoint and the ComfyUI it runs on (:func:`reads_the_schedule`), fixed at load.
    schedule_heads: bool = False

    def for_model(self, model_patcher: Any) -> "MiniMaxH3Adapter":
        dm = getattr(getattr(model_patcher, "model", None), "diffusion_model", None)
        heads = dm is not None and reads_the_schedule(dm)
        return self if heads == self.schedule_heads else dataclasses.replace(self, schedule_heads=heads)

    def model_refusal(self) -> str | None:
        return SCHEDULE_HEADS_REFUSAL if self.schedule_heads else None

    def refusal(self, call: dict[str, Any]) -> str | None:
        if call.get("denoise_mask") is not None or call.get("audio_denoise_mask") is not None:
            return DENOISE_MASK_REFUSAL
        payload = call.get("minimax_payload") or {}
        if any(payload.get(k) for k in _CONDITION_ENTRIES):
            return CONDITIONS_REFUSAL
        unknown = sorted(str(k) for k, v in payload.items() if k not in _KNOWN_PAYLOAD and v is not None)
        if unknown:
            return f"MiniMax H3 conditioning entries BCG does not know ({', '.join(unknown)}): running eager"
        return None

    @staticmethod
    def _step(call: dict[str, Any]) -> float | None:
        """``timestep.flatten()[0]`` as a float, read on the host at each ask. Not memoised:
        :meth:`call_key` and :meth:`label` read it back to back (the first read drains the queue,
        so the second costs one small copy), while a memo would have to tell an updated tensor from
        the one it read, and a tensor made under ``torch.inference_mode`` (ComfyUI samples there)
        keeps no version counter to tell it by."""
        timestep = call.get("timestep")
        return None if timestep is None else float(timestep.flatten()[0])

    def call_key(self, call: dict[str, Any]) -> Any:
        """The step (``timestep.flatten()[0]``, read on the host) and the payload's values."""
        value = self._step(call)
        step = None if value is None else repr(value)
        payload = call.get("minimax_payload") or {}
        layout = payload.get("layout")
        tags = payload.get("text_token_tags")
        return (
            ("step", step),
            ("layout", None if layout is None else (tuple(layout.signature), tuple(map(tuple, layout.segments)))),
            ("tags", None if tags is None else tuple(tags.reshape(-1).tolist())),
            ("aug", repr(payload.get("visual_cond_noise_aug")), repr(payload.get("audio_cond_noise_aug"))),
        )

    def label(self, call: dict[str, Any]) -> str:
        """``WIDTHxHEIGHTxFRAMESf aN txtN b1 t0.9375``: the video's pixel size and frames (the
        17k+5 grid), the audio latent's length, the context length, and the step (``1 - sigma``)."""
        x = call.get("x")
        if not isinstance(x, (list, tuple)) or not x or not hasattr(x[0], "shape") or x[0].dim() != 5:
            return super().label(call)
        video = x[0]
        audio = x[1].shape[-1] if len(x) > 1 and hasattr(x[1], "shape") else 0
        h, w = video.shape[-2] * self.latent_scale, video.shape[-1] * self.latent_scale
        context = call.get(self.context_arg)
        text = f" txt{context.shape[1]}" if context is not None and hasattr(context, "shape") else ""
        value = self._step(call)
        step = "" if value is None else f" t{1.0 - value / 1000.0:.4f}"
        return f"{w}x{h}x{pixel_frames(video.shape[2])}f a{audio}{text} b{video.shape[0]}{step}"


#: Payload entries the adapter knows (``seed`` steers only the refused keyframe noise;
#: ``audio_scale`` only the outer ``forward``, outside the hook): a call whose payload holds any
#: other (a later ComfyUI's) runs eager, naming it.
_KNOWN_PAYLOAD = frozenset(
    {"layout", "text_token_tags", "visual_cond_noise_aug", "audio_cond_noise_aug", "seed", "audio_scale"}
    | set(_CONDITION_ENTRIES)
)


#: Every line of 0.33.0's ``MiniMaxH3Model._forward`` that turns a value into Python (``float(``,
#: ``int(``, ``bool(``, ``.tolist()``, ``.item()``, ``.unique(``), with what makes it safe. The
#: test (tests/comfy/test_minimax_h3.py) fails when ComfyUI's forward has a line not listed here,
#: so a new read is looked at before any graph serves it.
HOST_READS = {
    'shift_v = float(transformer_options.get("minimax_h3_sigma_shift_video", self.sigma_shift_video))': "options: keyed by value (ModelSamplingMiniMaxH3), else the config",
    'shift_a = float(transformer_options.get("minimax_h3_sigma_shift_audio", self.sigma_shift_audio))': "options: keyed by value (ModelSamplingMiniMaxH3), else the config",
    "sigma_v = (timestep.flatten()[0] / 1000.0).float().clamp(min=1e-6)": "a device op, no read",
    "t_v = float(1.0 - sigma_v)": "keyed: the step; replayed by HostReads",
    "t_a = float(1.0 - time_shift_sigma(sigma_v, shift_v, shift_a))": "keyed: the step and shifts; replayed by HostReads",
    'vis_aug = float(payload.get("visual_cond_noise_aug", VISUAL_COND_TIMESTEP))': "keyed: payload value",
    'aud_aug = float(payload.get("audio_cond_noise_aug", AUDIO_COND_TIMESTEP))': "keyed: payload value",
    "if rows_t.unique().numel() == 1:": "noise mask: eager",
    'seg_t["video"] = float(rows_t[0])': "noise mask: eager",
    "if not bool((m >= 1.0 - 1e-3).all()):": "noise mask: eager",
    'seg_t["audio"] = float(rows_t[0])': "noise mask: eager",
    "| (set(video_rows_t.unique().tolist()) if video_rows_t is not None else set())": "noise mask: eager",
    "| (set(audio_rows_t.unique().tolist()) if audio_rows_t is not None else set()))": "noise mask: eager",
    "levels = rows_t.unique()": "noise mask: eager",
    "base = torch.tensor([t_row[v] * 3 + tag for v in levels.tolist()],": "noise mask: eager",
    "tags = text_tags.view(-1).tolist()": "keyed: the payload's tags (a CPU tensor), by value",
    "mod_segments.append((a + run_start, a + i, row_base + int(tags[run_start])))": "keyed: the tags",
}


ADAPTER = MiniMaxH3Adapter(
    family="minimax_h3",
    display_name="MiniMax H3",
    config_classes=("MiniMaxH3",),
    max_text_length=2048,
    text_policy="exact length: each prompt length the DiT sees is its own graph (and each sampling step its own: the forward reads its step on the host)",
    latent_scale=16,
    temporal_scale=4,
    frame_grid="17k+5",
    stage_host_copies=True,
    replay_host_reads=True,
    keys_per_step=True,
    opaque_args=("minimax_payload",),
    # The payload's host tensors, keyed by value (call_key: the layout's signature and segments, the
    # text tags): the captured call's are held and read in place where the model runs on the host
    # (the CPU stand-in); on CUDA each is copied to the device and the copy staged (host copies).
    outside_reads=(
        (("aten.to.dtype", "float64", "cpu"), "the layout's position_ids [S, 3], made from its signature and segments"),
        (("aten.to.dtype_layout", "bool", "cpu"), "the layout's img_update / audio_update masks, from its segments"),
        (("aten.view.default", "int64", "cpu"), "the payload's text_token_tags, in the key by value"),
    ),
    text_dim=5120,
)


def minimax_h3_extras(facts, batch, length, generator, guidance):
    """CLIPTextEncode with the MiniMax H3 Qwen3-VL encoder on a text prompt: no pooled output and
    every token tagged as text (``minimax_token_tags``: 1; vision pads would be 0)."""
    import torch

    return {"pooled_output": None, "minimax_token_tags": torch.ones(length, dtype=torch.long)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=5120,
    pooled_dim=None,
    default_cond_length=128,
    latent_channels=32,
    conditioning_extras=minimax_h3_extras,
)
