"""Which parts of ComfyUI's ``transformer_options`` may change the computation of a DiT call.

``transformer_options`` is a new dict on every call and travels to the DiT as an opaque argument
of the runner. This module turns it into key material: bookkeeping entries are ignored, values that
steer the math (``rope_options``) enter the key, and anything it does not know makes the call eager
with a reason, never a replay that ignores it.

Leaving bookkeeping out of the key is a claim about ComfyUI's forwards: that they hand those
entries only to patches and hooks. A forward that reads one itself (0.33.0's SeedVR2 swaps its
output halves by ``cond_or_uncond``; a later MiniMax H3 blends heads by ``sample_sigmas``) would
freeze the captured call's value into the graph. :class:`WatchedOptions` checks the claim on every
capture instead of trusting the list: the capture's plain run of the live call gets the options
through it, and a read of a bookkeeping entry the call came with fails that capture by name.
"""

from __future__ import annotations

import copy
from typing import Any, Hashable, Iterable

from ..core.capture import UnkeyedOpaqueRead
from ..core.reasons import Kind, Reason
from .guards import DYNAMIC_VRAM_REFUSAL
from .host_facts import ATTENTION_OVERRIDE, BOOKKEEPING_KEYS, DYNAMIC_PREFETCH, KEYED_OPTIONS


def freeze(value: Any) -> Hashable:
    """A hashable, order-stable image of plain option values (dicts, lists, numbers, strings)."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    raise TypeError(type(value).__name__)


def options_key(options: dict, own_override: Any) -> tuple[Hashable, Reason | None]:
    """``(key_extra, refusal)`` for one call's ``transformer_options``.

    ``own_override`` is the attention break this call runs through (BCG's own, or the one
    ``decision.decide`` put around an override BCG does not own), or None; any other override
    here is another BCG model's break, which this session cannot key: refused.
    """
    extra: list[Hashable] = []
    for name, value in options.items():
        if name in BOOKKEEPING_KEYS:
            continue
        if name == DYNAMIC_PREFETCH:
            if value:
                return (), Reason(Kind.OPTIONS, DYNAMIC_VRAM_REFUSAL)
            continue
        if name == ATTENTION_OVERRIDE:
            if value is not own_override:
                return (), Reason(
                    Kind.OPTIONS, "another BCG model's attention break is installed here (use one BCG Apply per model)"
                )
            continue
        if name in ("patches", "patches_replace"):
            active = sorted(k for k, v in (value or {}).items() if v)
            if active:
                return (), Reason(
                    Kind.OPTIONS,
                    f"model patches present ({name}: {', '.join(map(str, active))}): patched forwards run eager",
                )
            continue
        if name in KEYED_OPTIONS:
            try:
                extra.append((name, freeze(value)))
            except TypeError as unkeyable:
                return (), Reason(Kind.OPTIONS, f"{name} holds a {unkeyable}, which cannot be keyed")
            continue
        return (), Reason(
            Kind.OPTIONS, f"unknown transformer_options entry '{name}': running eager rather than guessing"
        )
    return tuple(extra), None


class WatchedOptions(dict):
    """A call's ``transformer_options`` as a capture's plain run hands them to the forward: reading
    a bookkeeping entry the call came with raises :class:`UnkeyedOpaqueRead` naming it.

    A read is ``options[k]``, ``get``, ``in``, ``pop`` or ``setdefault`` of an entry that was
    present when the DiT was called and that the forward has not written since, through this dict
    or a ``.copy()`` of it (ComfyUI's forwards copy their options that way before writing block
    entries). Entries the forward writes (``block_index``, ``img_slice``, ...) are then its own and
    may be read. A break is not watched (``session.BreakingAttention`` hands it a plain copy): it
    runs again at every replay with the live call's options, so its reads are not the graph's. Not
    seen: iteration (``items()``, ``{**options}``, ``dict(options)``: the copy made
    so is a plain dict, and reads from it are not watched), which is how BCG's own attention break
    tells the written entries apart; the proof's bit-equality still stands behind it.
    """

    __slots__ = ("_watched",)

    def __init__(self, options: dict, watched: Iterable[str] | None = None):
        """``watched``: the entries still watched (a copy's original's); by default the bookkeeping
        entries ``options`` holds."""
        super().__init__(options)
        self._watched = set(BOOKKEEPING_KEYS.intersection(options) if watched is None else watched)

    def _check(self, name: Any) -> None:
        if name in self._watched:
            raise UnkeyedOpaqueRead(
                f"the forward reads transformer_options[{name!r}], which BCG leaves out of the key as bookkeeping: "
                "a replay would reuse the captured call's value (report the model: BCG must key or refuse this entry)"
            )

    def __getitem__(self, name):
        self._check(name)
        return super().__getitem__(name)

    def get(self, name, default=None):
        self._check(name)
        return super().get(name, default)

    def __contains__(self, name):
        self._check(name)
        return super().__contains__(name)

    def pop(self, name, *default):
        self._check(name)
        return super().pop(name, *default)

    def setdefault(self, name, default=None):
        self._check(name)
        return super().setdefault(name, default)

    def __setitem__(self, name, value):
        self._watched.discard(name)
        super().__setitem__(name, value)

    def __delitem__(self, name):
        self._watched.discard(name)
        super().__delitem__(name)

    def update(self, *args, **kwargs):
        new = dict(*args, **kwargs)
        self._watched.difference_update(new)
        super().update(new)

    def __ior__(self, other):
        self.update(other)
        return self

    def clear(self):
        self._watched.clear()
        super().clear()

    def copy(self) -> WatchedOptions:
        return WatchedOptions(self, self._watched)

    __copy__ = copy

    def __deepcopy__(self, memo) -> WatchedOptions:
        return WatchedOptions(copy.deepcopy(dict(self), memo), self._watched)


def watched_call(kwargs: dict) -> dict:
    """``kwargs`` with their ``transformer_options`` watched (:class:`WatchedOptions`), for the
    run's ``StateBinding.watch``: a fresh watch per run, since a run's writes make entries its own."""
    options = kwargs.get("transformer_options")
    if not isinstance(options, dict):
        return kwargs
    return {**kwargs, "transformer_options": WatchedOptions(options)}
