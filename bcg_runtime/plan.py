"""The warm-up plan: which shapes to capture, parsed from what a user types into a node.

Every parse error names the field, the bad value and what is accepted, e.g.
``resolutions: '512x' is not WIDTHxHEIGHT (e.g. 1024x1024)``. Inputs whose intent is obvious are
normalised and the normalisation is reported in :attr:`WarmupPlan.notes` (duplicates dropped,
``512`` read as ``512x512``), never silently.

Video families take an optional frame count, ``WIDTHxHEIGHTxFRAMES`` (``832x480x33``: pixel frames,
as ComfyUI's empty video latent nodes count them); :func:`check_frames` holds it to the model's
temporal grid once the model is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import InputError

#: ComfyUI's own upper bound for latent image sizes (nodes.MAX_RESOLUTION).
MAX_RESOLUTION = 16384
#: The VAEs of the supported families downsample by 8: a pixel size must be a multiple of it.
PIXEL_GRID = 8
MAX_BATCH = 64


class PlanError(InputError):
    """A warm-up input that cannot be used; the message names the field and the fix."""


@dataclass
class WarmupPlan:
    #: ``(width, height, frames)``; frames None: not given (an image, or a video model's one frame).
    resolutions: list[tuple[int, int, int | None]]
    text_lengths: list[int]
    batch_sizes: list[int]
    notes: list[str] = field(default_factory=list)


def _items(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"[,\n;]+", text or "") if p.strip()]


def parse_sizes(
    text: str, notes: list[str] | None = None, field_name: str = "resolutions"
) -> list[tuple[int, int, int | None]]:
    """``"512x512, 832x480x33"`` (comma, semicolon or newline separated) ->
    ``[(512, 512, None), (832, 480, 33)]``: width, height and the optional frame count.

    ``field_name`` names the input in errors and notes (the headless client parses its ``sizes`` and
    ``--resolutions`` here too)."""
    notes = notes if notes is not None else []
    items = _items(text)
    if not items:
        raise PlanError(
            f"{field_name}: empty; give at least one WIDTHxHEIGHT, e.g. 1024x1024 (video: WIDTHxHEIGHTxFRAMES, e.g. 832x480x33)"
        )
    out: list[tuple[int, int, int | None]] = []
    for item in items:
        m = re.fullmatch(r"(-?\d+)\s*[xX×*]\s*(-?\d+)(?:\s*[xX×*]\s*(-?\d+))?", item)
        if m is None:
            if re.fullmatch(r"\d+", item):
                notes.append(f"{field_name}: '{item}' read as {item}x{item}")
                m = re.fullmatch(r"(\d+)x(\d+)()", f"{item}x{item}")
            else:
                raise PlanError(
                    f"{field_name}: '{item}' is not WIDTHxHEIGHT (e.g. 1024x1024) or WIDTHxHEIGHTxFRAMES (e.g. 832x480x33)"
                )
        w, h = int(m.group(1)), int(m.group(2))
        frames = int(m.group(3)) if m.group(3) else None
        for name, v in (("width", w), ("height", h)):
            if v <= 0:
                raise PlanError(f"{field_name}: '{item}' has {name} {v}; sizes must be positive, e.g. 1024x1024")
            if v > MAX_RESOLUTION:
                raise PlanError(f"{field_name}: '{item}' has {name} {v}, above ComfyUI's maximum {MAX_RESOLUTION}")
            if v % PIXEL_GRID:
                lo, hi = v - v % PIXEL_GRID, v - v % PIXEL_GRID + PIXEL_GRID
                fix = f"use {lo} or {hi}" if lo > 0 else f"use {hi}"
                raise PlanError(
                    f"{field_name}: '{item}' has {name} {v}, not a multiple of {PIXEL_GRID} (the latent grid); {fix}"
                )
        if frames is not None and not 1 <= frames <= MAX_RESOLUTION:
            raise PlanError(
                f"{field_name}: '{item}' has {frames} frames; frame counts must be 1 to {MAX_RESOLUTION}, e.g. 832x480x33"
            )
        if (w, h, frames) in out:
            notes.append(f"{field_name}: duplicate {_size_text(w, h, frames)} dropped")
            continue
        out.append((w, h, frames))
    return out


def parse_resolutions(
    text: str, notes: list[str] | None = None, field_name: str = "resolutions"
) -> list[tuple[int, int]]:
    """``"512x512, 1024x1024"`` -> ``[(512, 512), (1024, 1024)]``: image sizes only (the benchmarks'
    and the headless client's); a frame count is refused with a message that says where frames belong."""
    out = []
    for w, h, frames in parse_sizes(text, notes, field_name):
        if frames is not None:
            raise PlanError(
                f"{field_name}: '{_size_text(w, h, frames)}' is not WIDTHxHEIGHT (e.g. 1024x1024): frame counts are for the warm-up of video models"
            )
        out.append((w, h))
    return out


def _size_text(w: int, h: int, frames: int | None) -> str:
    return f"{w}x{h}" if frames is None else f"{w}x{h}x{frames}"


def check_frames(sizes: list[tuple[int, int, int | None]], temporal_scale: int | None, model: str) -> None:
    """Hold typed frame counts to the model's temporal grid (PlanError naming the fix otherwise).

    ``temporal_scale``: pixel frames per latent frame of a video model (pixel frames
    = (latent frames - 1) * scale + 1, the first frame alone), None for an image model, which
    takes no frame count."""
    for w, h, frames in sizes:
        if frames is None:
            continue
        item = _size_text(w, h, frames)
        if temporal_scale is None:
            raise PlanError(f"resolutions: '{item}' gives a frame count, but {model} makes images; write {w}x{h}")
        off = (frames - 1) % temporal_scale
        if off:
            lo, hi = frames - off, frames - off + temporal_scale
            raise PlanError(
                f"resolutions: '{item}' has {frames} frames; {model} takes {temporal_scale}k+1 frames "
                f"(one latent frame, then one per {temporal_scale}); use {lo} or {hi}"
            )


def _parse_ints(field_name: str, text: str, lo: int, hi: int, example: str, notes: list[str]) -> list[int]:
    items = _items(text)
    if not items:
        raise PlanError(f"{field_name}: empty; give comma-separated whole numbers, e.g. {example}")
    out: list[int] = []
    for item in items:
        if not re.fullmatch(r"[+-]?\d+", item):
            raise PlanError(f"{field_name}: '{item}' is not a whole number; give e.g. {example}")
        v = int(item)
        if v < lo or v > hi:
            raise PlanError(f"{field_name}: {v} is out of range; accepted: {lo} to {hi}")
        if v in out:
            notes.append(f"{field_name}: duplicate {v} dropped")
            continue
        out.append(v)
    return out


def parse_text_buckets(text: str, max_length: int, notes: list[str] | None = None) -> list[int]:
    notes = notes if notes is not None else []
    return _parse_ints("text_buckets", text, 1, max_length, "64,128,256,512", notes)


def parse_batch_sizes(text: str, notes: list[str] | None = None) -> list[int]:
    notes = notes if notes is not None else []
    return _parse_ints("batch_sizes", text, 1, MAX_BATCH, "1,2", notes)


def parse_plan(
    resolutions: str,
    text_buckets: str | None,
    batch_sizes: str,
    max_text_length: int,
    resolutions_optional: bool = False,
    model: str | None = None,
    temporal_scale: int | None = None,
) -> WarmupPlan:
    """Parse all three fields; ``text_buckets=None`` plans no placeholder prompts (conditioning only);
    ``resolutions_optional``: an empty ``resolutions`` plans none (a connected latent gives the size).
    ``model`` (its display name) and ``temporal_scale`` (its adapter's): typed frame counts are
    held to that model's temporal grid (:func:`check_frames`); None: the model is not known."""
    notes: list[str] = []
    sizes = [] if resolutions_optional and not _items(resolutions) else parse_sizes(resolutions, notes)
    if model is not None:
        check_frames(sizes, temporal_scale, model)
    return WarmupPlan(
        resolutions=sizes,
        text_lengths=[] if text_buckets is None else parse_text_buckets(text_buckets, max_text_length, notes),
        batch_sizes=parse_batch_sizes(batch_sizes, notes),
        notes=notes,
    )
