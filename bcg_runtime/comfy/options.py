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

from ..core.runner import UnkeyedOpaqueRead
from .guards import DYNAMIC_VRAM_REFUSAL

#: Bookkeeping the DiT writes itself as it walks its blocks, derived from shapes that are in the
#: key; present at entry only when a caller hands one options dict to several calls. A forward's
#: reads of these are of its own values once it wrote them.
WRITTEN_BY_THE_DIT = frozenset(
    {
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
    }
)
#: Entries that carry no computation for the DiT forward itself (ComfyUI 0.8.0 to 0.33.0): ComfyUI
#: hands them to patches, hooks and wrappers. Every capture checks that its forward reads none of
#: them (:class:`WatchedOptions`); :data:`KNOWN_BOOKKEEPING_READS` lists the lines of ComfyUI's DiT
#: code that do read one, with what keeps each from a graph.
BOOKKEEPING_KEYS = (
    frozenset(
        {
            "wrappers",  # wrapper chain; BCG checks that it is innermost itself
            "callbacks",
            "sigmas",  # read only by patches, and patches make the call eager
            "sample_sigmas",  # the whole schedule: read only by hooks and patches (0.33 moves it to the device)
            "cond_or_uncond",
            "uuids",
            # 0.33's multi-GPU split: a call that carries it runs eager before its options are read (decision.py)
            "multigpu_thread_device",
            "easycache",  # EasyCache's state; its wrapper runs outside BCG's
        }
    )
    | WRITTEN_BY_THE_DIT
)
_PATCH = "a model patch's code: a call with active patches runs eager (options_key)"
#: Every line of ``comfy/ldm`` (0.8.0 and 0.33.0) that reads a bookkeeping entry the DiT does not
#: write itself, with what keeps it out of a served graph. tests/comfy/test_options_reads.py fails
#: on a ComfyUI with a line not listed here: a forward that reads one of these from a copy the
#: watch cannot follow (``{**options}``) or on a path a capture did not take would otherwise be
#: served with the captured call's value.
KNOWN_BOOKKEEPING_READS = {
    ("comfy/ldm/anima/lllite.py", 'sigmas = transformer_options.get("sigmas")'): _PATCH + " (ControlNet-LLLite)",
    ("comfy/ldm/supir/supir_patch.py", 'sigma = kwargs["transformer_options"].get("sigmas")'): _PATCH + " (SUPIR)",
    (
        "comfy/ldm/wan/model_multitalk.py",
        'wrappers = model_options["transformer_options"]["wrappers"]',
    ): "MultiTalk's patch set-up, reading the model's options where it installs its wrapper, not a forward",
    (
        "comfy/ldm/hunyuan_video/model.py",
        "w = torch.where(transformer_options['sigmas'][0] == transformer_options['sample_sigmas'])[0]  # This most likely could be improved",
    ): "the meanflow path (time_r_in): HunyuanVideo 1.5 and HunyuanImage 2.1 adapters refuse such checkpoints",
    (
        "comfy/ldm/hunyuan_video/model.py",
        "timesteps_r = transformer_options['sample_sigmas'][w[0] + 1]",
    ): "the meanflow path (time_r_in): HunyuanVideo 1.5 and HunyuanImage 2.1 adapters refuse such checkpoints",
    (
        "comfy/ldm/seedvr/model.py",
        'txt, txt_shape = self._resolve_text_conditioning(context, transformer_options.get("cond_or_uncond"))',
    ): "SeedVR2: a refused family (models/seedvr2.py)",
    (
        "comfy/ldm/seedvr/model.py",
        'return self._swap_pos_neg_halves(out, transformer_options.get("cond_or_uncond"))',
    ): "SeedVR2: a refused family (models/seedvr2.py)",
    (
        "comfy/ldm/trellis2/model.py",
        'cond_or_uncond = transformer_options.get("cond_or_uncond")',
    ): "TRELLIS.2: a 3-D model, out of scope (models/out_of_scope.py)",
}
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
                return (), DYNAMIC_VRAM_REFUSAL
            continue
        if name == ATTENTION_OVERRIDE:
            if value is not own_override:
                return (), "another BCG model's attention break is installed here (use one BCG Apply per model)"
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
    runner's ``watched_kwargs``: a fresh watch per run, since a run's writes make entries its own."""
    options = kwargs.get("transformer_options")
    if not isinstance(options, dict):
        return kwargs
    return {**kwargs, "transformer_options": WatchedOptions(options)}
