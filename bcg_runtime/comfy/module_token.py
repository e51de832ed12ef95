"""The per-call token: a cheap image of a DiT's module state that a run compares at every DiT call,
so that a module override installed in the middle of a run makes the run take its fingerprint again."""

from __future__ import annotations

import sys

import torch
from torch.utils.hooks import RemovableHandle

from . import code_state


class WatchedModules:
    """The instance dictionaries of a DiT's modules, as :func:`modules_token` watches them: all of
    them by size, and the forward overrides of those that have one by identity; and where the
    attention functions live (:func:`attention_slots`). Taken once per run and again whenever the
    token moved (a module that gains an override is watched from then on)."""

    __slots__ = ("dicts", "with_forward", "attention")

    def __init__(self, dicts: list[dict], attention: list[tuple[dict, str]]):
        self.dicts = dicts
        self.with_forward = [d for d in dicts if "forward" in d]
        self.attention = attention


def attention_slots() -> list[tuple[dict, str]]:
    """``(module dictionary, name)`` of every attention function a forward calls by name: the
    ``optimized_attention*`` globals of ComfyUI's model modules and torch's SDPA. Attention is what
    nodes swap per step from a model wrapper (one kernel for early steps, another for late ones), so
    the token reads them at every call; the rest of the code state is read once per run."""
    slots = [(namespace, attr) for _, namespace, attr in code_state.attention_globals()]
    functional = sys.modules.get("torch.nn.functional")
    if functional is not None:
        slots.append((vars(functional), "scaled_dot_product_attention"))
    return slots


def module_dicts(diffusion_model: torch.nn.Module | None) -> WatchedModules:
    """The modules :func:`modules_token` watches (None: nothing, outside a run)."""
    if diffusion_model is None:
        return WatchedModules([], [])
    return WatchedModules([m.__dict__ for m in diffusion_model.modules()], attention_slots())


def modules_token(watched: WatchedModules) -> tuple:
    """A cheap image of the modules' instance state, compared at every DiT call of a run. It moves
    when a module gains or loses an attribute (a new forward override, hooks dictionary or
    attribute changes the dictionary's size), when an existing forward override is replaced, when
    an attention function is rebound (:func:`attention_slots`), and when any forward hook or
    pre-hook is registered anywhere in the process (torch numbers every hook handle from one class
    counter, so a new hook moves it; a hook present at the run's start was already refused by the
    fingerprint). Equal tokens within a run mean the run's fingerprint still holds for what the
    token covers; a moved token makes the caller take it again.

    Why not the hooks dictionaries' sizes: reading two ordered dictionaries per module costs more
    than everything else here together, and handle numbering covers every registration path torch
    offers, the global hooks included."""
    return (
        tuple(map(len, watched.dicts)),
        tuple([d.get("forward") for d in watched.with_forward]),
        tuple([d.get(name) for d, name in watched.attention]),
        RemovableHandle.next_id,
    )
