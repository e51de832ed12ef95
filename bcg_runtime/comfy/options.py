"""Which parts of ComfyUI's ``transformer_options`` may change the computation of a DiT call.

``transformer_options`` is a new dict on every call and travels to the DiT as an opaque argument
of the runner. This module turns it into key material: bookkeeping entries are ignored, values that
steer the math (``rope_options``) enter the key, and anything it does not know makes the call eager
with a reason, never a replay that ignores it.
"""

from __future__ import annotations

from typing import Any, Hashable

#: Entries that carry no computation for the DiT forward itself (ComfyUI 0.8.0).
BOOKKEEPING_KEYS = frozenset(
    {
        "wrappers",  # wrapper chain; BCG checks that it is innermost itself
        "callbacks",
        "sigmas",  # read only by patches, and patches make the call eager
        "sample_sigmas",
        "cond_or_uncond",
        "uuids",
        "total_blocks",  # written by the DiT as it walks its blocks
        "block_type",
        "block_index",
        "block",
        "transformer_index",
        "activations_shape",
        "original_shape",
        "easycache",  # EasyCache's state; its wrapper runs outside BCG's
    }
)
ATTENTION_OVERRIDE = "optimized_attention_override"


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
        if name == ATTENTION_OVERRIDE:
            if value is not own_override:
                return (), "another attention override replaced BCG's (apply BCG after attention patches)"
            continue
        if name in ("patches", "patches_replace"):
            active = sorted(k for k, v in (value or {}).items() if v)
            if active:
                return (), f"model patches present ({name}: {', '.join(map(str, active))}): patched forwards run eager"
            continue
        if name == "rope_options":
            try:
                extra.append((name, freeze(value)))
            except TypeError:
                return (), f"rope_options holds a {type(value).__name__}, which cannot be keyed"
            continue
        return (), f"unknown transformer_options entry '{name}': running eager rather than guessing"
    return tuple(extra), None
