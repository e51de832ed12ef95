"""A model family's recipe: the facts ComfyUI's detection and sampling need to build and run the
family's real model class with random weights (``bench/synthetic.py``). What the product's warm-up
needs too (the text encoder's output its placeholder conditioning mirrors, the latent's shape) is
the family's adapter and ``WarmupFacts`` (``bcg_runtime/comfy/models/<family>.py``), which a recipe
names and reads, never repeats.

Each recipe is a module of ``bench/recipes/``, named as the product's family module whose adapter
and facts it reads (tests/unit/test_trees_and_layout.py). Importing this module needs neither torch
nor ComfyUI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

if TYPE_CHECKING:
    from bcg_runtime.comfy.models.base import ModelAdapter, WarmupFacts


@dataclass(frozen=True)
class FamilyInfo:
    """Facts about one model family, as ComfyUI detects and runs it (checked against 0.8.0 and
    0.33.0 by ``bench.synthetic._verify_detection`` at every build)."""

    name: str
    title: str
    ldm_class: str  # "module:Class" of the diffusion model ComfyUI instantiates
    supported_model: str  # comfy.supported_models class picked by detection
    model_base: str  # comfy.model_base class
    latent_format: str  # comfy.latent_formats class
    hidden_size: int
    num_heads: int
    text_encoder: str
    latent_dimensions: int  # 2: latents are [B,C,H,W]; 3: [B,C,T,H,W] (ComfyUI unsqueezes T=1)
    depth_keys: tuple[str, ...]  # unet_config keys that count blocks
    real_depth: tuple[int, ...]  # their values in the real checkpoint
    block_attrs: tuple[str, ...]  # diffusion_model submodules (dotted paths) holding those blocks
    default_steps: int
    default_cfg: float
    config: Mapping[str, Any]  # full-depth unet_config exactly as model_detection returns it
    #: The family's ``ModelAdapter`` and its module's ``WarmupFacts`` (``FACTS``): what both need
    #: (the latent's scales and channels, the text encoder's widths, default prompt length and
    #: extras) is theirs and read from them (the properties below), never written twice.
    adapter: ModelAdapter
    facts: WarmupFacts
    #: (positive, negative) prompt token counts the tests sample with: different lengths, so cond and
    #: uncond are separate signatures, unless the family's encoder pads both alike (FLUX's T5: 256).
    prompt_lengths: tuple[int, int] = (40, 17)
    #: Depth of the full-size GPU exactness test (``depth_counts``): None = the real depth; fewer
    #: blocks at the real width where the whole model would not sample in the suite's time.
    gpu_test_depth: Any = None
    #: The fewest blocks (a ``depth`` as :meth:`depth_counts` takes it) whose checkpoint ComfyUI
    #: still detects as this class: 1 for most; Wan Animate's face adapter has ``num_layers // 5``
    #: blocks and its first block's key is what tells the class apart, so 5. The comfy tests'
    #: models and their layout check (``skip_unless_host_builds``) are built at this depth.
    smallest_depth: Any = 1
    #: True where ComfyUI's detection does not read the block counts from the checkpoint (it
    #: returns fixed counts, or none and the model class's defaults apply): every real checkpoint
    #: then has the real depth, and no key layout can ask for fewer blocks. A reduced-depth
    #: synthetic model gets its ``depth_keys`` through the ``supported_models`` class's
    #: ``unet_extra_config`` while it loads (``bench.synthetic._depth_set_at_load``).
    depth_fixed_by_detection: bool = False
    #: ``config`` keys a later ComfyUI added to the class and its detection, each with the value
    #: that means what an older ComfyUI does without the key (the feature off): on a ComfyUI whose
    #: class does not take the key it is left out (``synthetic``), and a detection without it is
    #: the same config. E.g. LTX-Video's ``use_keyframes_abs_pos_embedding: False``.
    added_later: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    #: ``config`` keys a real checkpoint carries in its safetensors metadata (``{"config":
    #: {"transformer": {...}}}``, read by the detection of LTX-2) rather than in its key layout:
    #: the synthetic checkpoint is detected and loaded with that metadata (:meth:`metadata`).
    metadata_keys: tuple[str, ...] = ()
    #: ``config`` keys the ``model_base`` class sets before it builds ``ldm_class`` (0.33's
    #: ``WAN21_FlowRVS`` builds a ``WanModel`` with ``model_type="t2v"`` from a detected
    #: ``"flow_rvs"``): the synthetic checkpoint's layout is made with them.
    built_with: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    #: Channels of the latent the sampler returns where the family's latent format repacks the
    #: model's (the HunyuanImage 2.1 refiner's ``process_out``: 64 model channels are two frames of
    #: its VAE's 32). None: ``latent_channels``.
    sampled_channels: int | None = None
    #: ``(recipe, state_dict) -> state_dict``: the released checkpoint's keys made from the module
    #: tree ComfyUI builds, where they differ (the class's ``process_unet_state_dict`` undoes it at
    #: load: PixelDiT's ``core.`` prefix and fused pixel-block modulation). None: the same keys.
    checkpoint_layout: Callable[..., dict] | None = None

    @property
    def text_dim(self) -> int:
        """Context width of the family's text encoder (its facts')."""
        return self.facts.text_dim

    @property
    def pooled_dim(self) -> int | None:
        return self.facts.pooled_dim

    @property
    def default_cond_length(self) -> int:
        return self.facts.default_cond_length

    @property
    def default_guidance(self) -> float | None:
        return self.facts.default_guidance

    @property
    def latent_channels(self) -> int:
        return self.facts.latent_channels

    @property
    def second_stream_shape(self):
        """``(facts, batch, frames) -> shape`` of a second latent stream (LTX-2's audio), or None."""
        return self.facts.second_stream_shape

    @property
    def latent_downscale(self) -> int:
        """Image pixels per latent cell of the family's empty latent: its adapter's ``latent_scale``."""
        return self.adapter.latent_scale

    @property
    def temporal_downscale(self) -> int | None:
        """Video families: pixel frames per latent frame after the first (its adapter's
        ``temporal_scale``); empty latents are then ``[B,C,T,H,W]`` with T = (frames-1)//s + 1, as
        ComfyUI's empty video latent nodes make them. None: an image family."""
        return self.adapter.temporal_scale

    def unet_config(self, depth=None) -> dict:
        """The detection config with block counts set by :meth:`depth_counts`."""
        cfg = dict(self.config)
        for key, count in zip(self.depth_keys, self.depth_counts(depth)):
            cfg[key] = count
        return {k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in cfg.items()}

    def metadata(self, depth=None) -> dict[str, str] | None:
        """The safetensors metadata of the checkpoint at ``depth`` (None where the layout says
        everything); a depth key may be one of its keys (LTX-2's connector layers)."""
        if not self.metadata_keys:
            return None
        import json

        transformer = {k: v for k, v in self.unet_config(depth).items() if k in self.metadata_keys}
        return {"config": json.dumps({"transformer": transformer})}

    def extras(self, batch: int, length: int, generator: Any, guidance: float | None) -> dict:
        """The CONDITIONING extras for a context of ``(batch, length)`` (its facts' ``extras``)."""
        return self.facts.extras(batch, length, generator, guidance)

    def depth_counts(self, depth) -> tuple[int, ...]:
        """Block counts for ``depth``: None = real depth; an int applies to every block kind (Flux: that
        many double and single blocks); a sequence gives one count per ``self.depth_keys``."""
        if depth is None:
            return self.real_depth
        if isinstance(depth, bool):
            raise ValueError(f"depth for {self.name!r} must be an int or None, got {depth!r}")
        if isinstance(depth, int):
            counts = (depth,) * len(self.depth_keys)
        elif isinstance(depth, Sequence) and len(depth) == len(self.depth_keys):
            counts = tuple(depth)
        else:
            raise ValueError(
                f"depth for {self.name!r} must be None, an int or a {len(self.depth_keys)}-sequence "
                f"for {self.depth_keys}, got {depth!r}"
            )
        for key, count, real in zip(self.depth_keys, counts, self.real_depth):
            if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= real:
                raise ValueError(f"depth {key}={count!r} for {self.name!r} must be an int in 1..{real}")
        return counts


def config_differences(
    recipe: "FamilyInfo", want: Mapping[str, Any], detected: Mapping[str, Any], keys
) -> dict[str, tuple[Any, Any]]:
    """``{key: (want, detected)}`` for each of ``keys`` whose values differ as detection means them
    (:func:`same_config_value`); a key of ``recipe.added_later`` that the detection does not give,
    at its older value, is no difference (that ComfyUI builds the same model without it)."""
    older = recipe.added_later
    return {
        k: (want.get(k), detected.get(k))
        for k in keys
        if not same_config_value(want.get(k), detected.get(k))
        and not (k in older and k not in detected and same_config_value(want.get(k), older[k]))
    }


def same_config_value(a: Any, b: Any) -> bool:
    """Config values compared as detection means them: a tuple and a list of equal items are the
    same value (Wan's detection gives ``patch_size`` as a tuple; recipes hand out lists)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_config_value(x, y) for x, y in zip(a, b))
    return a == b


def frozen_config(d: dict) -> Mapping[str, Any]:
    return MappingProxyType({k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items()})
