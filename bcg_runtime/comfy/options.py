"""Which parts of ComfyUI's ``transformer_options`` may change the computation of a DiT call.

``transformer_options`` is a new dict on every call and travels to the DiT as an opaque argument
of the runner. This module turns it into key material: bookkeeping entries are ignored, values that
steer the math (``rope_options``) enter the key, and anything it does not know makes the call eager
with a reason, never a replay that ignores it.
"""

from __future__ import annotations

from typing import Any, Hashable

from .guards import DYNAMIC_VRAM_REFUSAL

#: Entries that carry no computation for the DiT forward itself (ComfyUI 0.8.0 to 0.33.0).
BOOKKEEPING_KEYS = frozenset(
    {
        "wrappers",  # wrapper chain; BCG checks that it is innermost itself
        "callbacks",
        "sigmas",  # read only by patches, and patches make the call eager
        "sample_sigmas",  # the whole schedule: read only by hooks and patches (0.33 moves it to the device)
        "cond_or_uncond",
        "uuids",
        # 0.33's multi-GPU split: a call that carries it runs eager before its options are read (decision.py)
        "multigpu_thread_device",
        # Written by the DiT as it walks its blocks, derived from shapes that are in the key; present
        # at entry only when a caller hands one options dict to several calls.
        "total_blocks",
        "block_type",
        "block_index",
        "block",
        "transformer_index",
        "activations_shape",
        "original_shape",
        "img_slice",  # 0.33 Flux/Krea2: [text tokens, all tokens], for patches
        "grid_sizes",  # 0.33 Wan: the patch grid (T, H, W) of x, for patches
        "reference_image_num_tokens",  # 0.33 Flux/Krea2: reference latents' token counts, for patches
        "easycache",  # EasyCache's state; its wrapper runs outside BCG's
    }
)
ATTENTION_OVERRIDE = "optimized_attention_override"
#: Plain values that steer the forward's math: their frozen values enter the key.
KEYED_OPTIONS = (
    "rope_options",
    # ChromaRadianceOptions: overrides of Chroma Radiance's params (nerf_tile_size, use_sequential_txt_ids)
    "chroma_radiance_options",
    # ModelSamplingMiniMaxH3 (MiniMaxH3SigmaShift): the flow shifts MiniMax H3's forward reads as
    # floats and steers its timestep rows with; the audio shift moves the math at an unchanged step
    "minimax_h3_sigma_shift_video",
    "minimax_h3_sigma_shift_audio",
)
#: 0.33 (``BaseModel._apply_model``): True when the model is a Dynamic VRAM patcher, whose forward
#: faults weights in through side-stream prefetch queues (``comfy/model_prefetch.py``). False is
#: bookkeeping; True means weights have no fixed address for this call.
DYNAMIC_PREFETCH = "prefetch_dynamic_vbars"


def freeze(value: Any) -> Hashable:
    """A hashable, order-stable image of plain option values (dicts, lists, numbers, strings)."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    raise TypeError(type(value).__name__)


def options_key(options: dict, own_override: Any) -> tuple[Hashable, str | None]:
    """``(key_extra, refusal)`` for one call's ``transformer_options``.

    ``own_override`` is BCG's attention break (or None in mode 'full'); any other attention
    override installed after BCG Apply replaced it, which changes kernels: refused.
    """
    extra: list[Hashable] = []
    for name, value in options.items():
        if name in BOOKKEEPING_KEYS:
            continue
        if name == DYNAMIC_PREFETCH:
            if value:
                return (), DYNAMIC_VRAM_REFUSAL
            continue
        if name == ATTENTION_OVERRIDE:
            if value is not own_override:
                return (), "another attention override replaced BCG's (apply BCG after attention patches)"
            continue
        if name in ("patches", "patches_replace"):
            active = sorted(k for k, v in (value or {}).items() if v)
            if active:
                return (), f"model patches present ({name}: {', '.join(map(str, active))}): patched forwards run eager"
            continue
        if name in KEYED_OPTIONS:
            try:
                extra.append((name, freeze(value)))
            except TypeError as unkeyable:
                return (), f"{name} holds a {unkeyable}, which cannot be keyed"
            continue
        return (), f"unknown transformer_options entry '{name}': running eager rather than guessing"
    return tuple(extra), None
