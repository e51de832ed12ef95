"""Synthetic (random-weight) checkpoints for the DiT families BCG supports (a tool: the tests and
the benchmarks build their models here; the product never imports it).

Each family's recipe (:class:`~bench.recipe.FamilyInfo`: detection config, widths, depths) is a
module of ``bench/recipes/``, named as the product's family module whose adapter and warm-up facts
(text encoder widths, latent channels) it reads; this module builds from any recipe.
Each family's checkpoint is made by instantiating ComfyUI's own model class on the meta device with
the config ComfyUI's detection derives for the real checkpoint (optionally with fewer blocks), then
filling every key with seeded random values. The key names and shapes are exactly those of the
"diffusion_models" split files ComfyUI loads (no prefix; a recipe's ``checkpoint_layout`` maps
the module tree to a released file's keys where they differ), so ``comfy.sd.load_diffusion_model_state_dict``
detects the right ``supported_models`` class and builds the real model (every family of
``bcg_runtime.comfy.models``).

Placeholder conditioning and KSampler-path sampling are the product's
(``bcg_runtime.comfy.sampling``, handed the recipe here): the tests sample exactly as the warm-up does.
Edit workflows' reference latents and the quantized checkpoint formats are built here.

ComfyUI is imported lazily (inside functions): importing this module needs only torch.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import logging
import math
import time
from typing import Mapping

import torch

from bcg_runtime.comfy import sampling

from .recipe import FamilyInfo, config_differences
from .recipes import RECIPES

log = logging.getLogger(__name__)

__all__ = [
    "FamilyInfo",
    "FAMILIES",
    "family_info",
    "unet_config",
    "state_dict_shapes",
    "build_state_dict",
    "detect_family_class",
    "detected_config",
    "load_model",
    "save_model_file",
    "load_model_file",
    "linear_weight_keys",
    "block_linear_layers",
    "quantized_layers",
    "MIXED_NVFP4_FP8",
    "fp8_checkpoint",
    "scaled_fp8_checkpoint",
    "comfy_quant_checkpoint",
    "make_conditioning",
    "latent_channels",
    "empty_latent",
    "output_latent_shape",
    "sample",
]

WEIGHT_STD = 0.02
"""Standard deviation of every synthetic weight; norm gains are ``1 + N(0, WEIGHT_STD)``."""


FAMILIES: Mapping[str, FamilyInfo] = RECIPES
"""Every supported family's recipe by name (``bench/recipes/<name>.py``)."""


def family_info(family: str) -> FamilyInfo:
    """The recipe (:class:`FamilyInfo`) of ``family``; ValueError naming the accepted values otherwise."""
    info = FAMILIES.get(family) if isinstance(family, str) else None
    if info is None:
        raise ValueError(f"unknown model family {family!r}; accepted: {', '.join(sorted(FAMILIES))}")
    return info


def make_conditioning(
    family: str,
    length: int | None = None,
    seed: int = 0,
    batch: int = 1,
    guidance: float | None = None,
    text_dim: int | None = None,
):
    """The warm-up's placeholder conditioning (``sampling.make_conditioning``) for the recipe ``family``."""
    return sampling.make_conditioning(family_info(family), length, seed, batch, guidance, text_dim)


def empty_latent(
    family: str, width: int, height: int, batch: int = 1, frames: int | None = None, latent_scale: int | None = None
) -> torch.Tensor:
    """The warm-up's empty latent (``sampling.empty_latent``) for the recipe ``family``."""
    return sampling.empty_latent(family_info(family), width, height, batch, frames, latent_scale)


def sample(model, family: str, *args, **kwargs) -> torch.Tensor:
    """The warm-up's KSampler-path sampling (``sampling.sample``, same arguments) for the recipe ``family``."""
    return sampling.sample(model, family_info(family), *args, **kwargs)


def unet_config(family: str, depth=None) -> dict:
    """ComfyUI's detected unet_config for ``family`` at ``depth``."""
    return family_info(family).unet_config(depth)


def _ldm_class(info: FamilyInfo):
    module, name = info.ldm_class.split(":")
    return getattr(importlib.import_module(module), name)


@contextlib.contextmanager
def _weights_built_eagerly():
    """While the block runs, ComfyUI's ops build their weights at construction again.

    Under Dynamic VRAM (``comfy.memory_management.aimdo_enabled``, set by ``main.py`` on NVIDIA
    and by ``compiler_sim.init_aimdo``), ComfyUI 0.33's ``disable_weight_init.Linear`` and
    ``Embedding`` leave ``weight``/``bias`` None until a state dict is loaded, so a model built as
    a key/shape template would have no Linear keys at all (FLUX.1 is then detected as nothing).
    The template is never loaded, so it is built as without Dynamic VRAM; the flag is restored
    after (one thread: the builders are tools, run before sampling)."""
    try:
        import comfy.memory_management as memory_management
    except ImportError:  # ComfyUI 0.8.0: no Dynamic VRAM
        yield
        return
    before = getattr(memory_management, "aimdo_enabled", False)
    memory_management.aimdo_enabled = False
    try:
        yield
    finally:
        memory_management.aimdo_enabled = before


def _meta_model(info: FamilyInfo, depth, dtype):
    """ComfyUI's class for ``info`` on the meta device: every parameter of the checkpoint, with
    its shape, whether or not Dynamic VRAM is on (:func:`_weights_built_eagerly`)."""
    import comfy.ops

    cls = _ldm_class(info)
    config = {**info.unet_config(depth), **info.built_with}
    with _weights_built_eagerly():
        try:
            return cls(**config, device="meta", dtype=dtype, operations=comfy.ops.disable_weight_init)
        except TypeError:
            # An older ComfyUI whose class predates keys the recipe sets to their older meaning.
            older = {k: v for k, v in config.items() if k not in info.added_later}
            if older == config:
                raise
            return cls(**older, device="meta", dtype=dtype, operations=comfy.ops.disable_weight_init)


def _norm_gain_keys(model: torch.nn.Module) -> set[str]:
    """Keys of the gains of normalisation layers (RMSNorm/LayerNorm weight or scale)."""
    keys = set()
    for mod_name, mod in model.named_modules():
        if "norm" not in type(mod).__name__.lower():
            continue
        for pname, p in mod._parameters.items():
            if p is not None and pname in ("weight", "scale"):
                keys.add(f"{mod_name}.{pname}" if mod_name else pname)
    return keys


def state_dict_shapes(family: str, depth=None) -> dict[str, tuple[int, ...]]:
    """Key -> shape of the synthetic checkpoint (no prefix), without allocating any weight."""
    info = family_info(family)
    model = _meta_model(info, depth, torch.bfloat16)
    return {k: tuple(v.shape) for k, v in model.state_dict().items()}


def _key_seed(seed: int, key: str) -> int:
    digest = hashlib.blake2b(f"{int(seed)}/{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & ((1 << 63) - 1)


def build_state_dict(
    family: str,
    depth=None,
    seed: int = 0,
    dtype: torch.dtype = torch.bfloat16,
    device=None,
    prefix: str = "",
    verify: bool = True,
) -> dict[str, torch.Tensor]:
    """A random checkpoint for ``family`` in the key layout ComfyUI loads.

    Every tensor is ``N(0, 0.02)`` except norm gains (``1 + N(0, 0.02)``, so activations keep a
    realistic scale). Each key has its own generator seeded from ``(seed, key)``: the result is
    deterministic for a given device and does not depend on ``depth`` (block 0 of a depth-1 model
    equals block 0 of the full model). ``device`` is where the tensors are generated (use the GPU for
    full-size models); ``prefix`` (e.g. ``"model.diffusion_model."``) is prepended to every key.
    With ``verify`` ComfyUI's detection is run on the result and must give back the same config.
    """
    info = family_info(family)
    counts = info.depth_counts(depth)
    device = torch.device(device) if device is not None else torch.device("cpu")
    t0 = time.perf_counter()
    model = _meta_model(info, depth, dtype)
    gains = _norm_gain_keys(model)
    out: dict[str, torch.Tensor] = {}
    gen = torch.Generator(device=device)
    numel = 0
    for key, meta in model.state_dict().items():
        gen.manual_seed(_key_seed(seed, key))
        t = torch.empty(meta.shape, dtype=dtype, device=device)
        t.normal_(1.0 if key in gains else 0.0, WEIGHT_STD, generator=gen)
        out[key] = t
        numel += t.numel()
    del model
    if info.checkpoint_layout is not None:  # the released file's keys (the loader maps them back)
        out = info.checkpoint_layout(info, out)
    if prefix:
        out = {prefix + key: t for key, t in out.items()}
    log.info(
        "[BCG] synthetic %s checkpoint: %d tensors, %.3fB params, %s on %s, depth %s, seed %d (%.1fs)",
        info.name,
        len(out),
        numel / 1e9,
        dtype,
        device,
        dict(zip(info.depth_keys, counts)),
        seed,
        time.perf_counter() - t0,
    )
    if verify:
        _verify_detection(info, out, prefix, depth)
    return out


def detect_family_class(
    state_dict: Mapping[str, torch.Tensor], prefix: str = "", metadata: Mapping[str, str] | None = None
) -> tuple[str | None, dict | None]:
    """(supported_models class name, unet_config) that ComfyUI's detection gives ``state_dict``
    (with the checkpoint's safetensors ``metadata``, where the family's detection reads it)."""
    import comfy.model_detection

    cfg = comfy.model_detection.detect_unet_config(state_dict, prefix, metadata=metadata)
    if cfg is None:
        return None, None
    model_config = comfy.model_detection.model_config_from_unet_config(cfg, state_dict)
    return (type(model_config).__name__ if model_config is not None else None), cfg


def detected_config(
    family: str, state_dict: Mapping[str, torch.Tensor], prefix: str = "", depth=None
) -> tuple[str | None, dict | None]:
    """:func:`detect_family_class`, with the block counts a synthetic load sets where detection
    fixes them (``FamilyInfo.depth_fixed_by_detection``): the config the loaded model is built with."""
    info = family_info(family)
    cls_name, cfg = detect_family_class(state_dict, prefix, info.metadata(depth))
    if cfg is not None and info.depth_fixed_by_detection:
        cfg = {**cfg, **dict(zip(info.depth_keys, info.depth_counts(depth)))}
    return cls_name, cfg


@contextlib.contextmanager
def _depth_set_at_load(info: FamilyInfo, depth):
    """While loading a family whose detection fixes the depth: its ``supported_models`` class's
    ``unet_extra_config`` (applied over the detected config) also sets the block counts."""
    if not info.depth_fixed_by_detection:
        yield
        return
    import comfy.supported_models

    cls = getattr(comfy.supported_models, info.supported_model)
    own = cls.__dict__.get("unet_extra_config")
    cls.unet_extra_config = {**cls.unet_extra_config, **dict(zip(info.depth_keys, info.depth_counts(depth)))}
    try:
        yield
    finally:
        if own is None:
            del cls.unet_extra_config
        else:
            cls.unet_extra_config = own


#: unet_config entries ComfyUI derives from weight *values*, not the layout (0.33: Z-Image's
#: ``allow_fp16``, from the spread of a norm weight): random weights set them at random.
DETECTED_FROM_VALUES = frozenset({"allow_fp16"})


def _verify_detection(info: FamilyInfo, sd: Mapping[str, torch.Tensor], prefix: str, depth) -> None:
    cls_name, cfg = detected_config(info.name, sd, prefix, depth)
    want = info.unet_config(depth)
    if cls_name != info.supported_model or cfg is None:
        raise RuntimeError(
            f"[BCG] ComfyUI detected the synthetic {info.name!r} checkpoint as {cls_name!r}, "
            f"expected {info.supported_model!r}"
        )
    diff = config_differences(info, want, cfg, (set(want) | set(cfg)) - DETECTED_FROM_VALUES)
    if diff:
        raise RuntimeError(f"[BCG] detected config of synthetic {info.name!r} differs (ours, detected): {diff}")


def load_model(
    family: str,
    depth=None,
    seed: int = 0,
    device=None,
    dtype: torch.dtype | None = None,
    model_options=None,
    quant: str | None = None,
):
    """A ``comfy.model_patcher.ModelPatcher`` for a synthetic ``family`` checkpoint.

    Weights are generated in bf16 (or ``dtype``) on ``device`` (default: ComfyUI's torch device, so
    full-size models are generated on the GPU) and loaded through
    ``comfy.sd.load_diffusion_model_state_dict``, which picks the inference dtype as for a real
    checkpoint: on a GPU the first half type of the family's supported inference dtypes (bf16 for
    most, fp16 for SD3, Wan, HunyuanVideo 1.5 and OmniGen2), fp32 under ``--cpu``. Passing
    ``dtype`` also forces that dtype through ``model_options["dtype"]``. ``quant`` (a
    ``comfy_quant`` format such as ``float8_e4m3fn``, or :data:`MIXED_NVFP4_FP8`) writes the Linear
    layers of the repeated blocks quantized first (:func:`quantized_layers`, :func:`comfy_quant_checkpoint`): a mixed-precision
    checkpoint as the quantized releases ship. Checks the detected classes, the loaded keys, the
    block counts and the weight dtype (for ``quant``: that each quantized layer loaded in its
    format); raises RuntimeError when one is off.
    """
    import comfy.model_management
    import comfy.sd

    info = family_info(family)
    counts = info.depth_counts(depth)
    if device is None:
        device = comfy.model_management.get_torch_device()
    device = torch.device(device)
    options = dict(model_options or {})
    if dtype is not None:
        options.setdefault("dtype", dtype)
    sd = build_state_dict(info.name, depth=depth, seed=seed, dtype=dtype or torch.bfloat16, device=device)
    # The module tree's keys, which a released layout (``checkpoint_layout``) loads back into.
    shapes = (
        state_dict_shapes(info.name, depth)
        if info.checkpoint_layout is not None
        else {k: tuple(v.shape) for k, v in sd.items()}
    )
    quantized = quantized_layers(info.name, depth, quant) if quant else {}
    if quantized:
        sd = comfy_quant_checkpoint(sd, quantized)
    t0 = time.perf_counter()
    with _depth_set_at_load(info, depth):
        patcher = comfy.sd.load_diffusion_model_state_dict(sd, model_options=options, metadata=info.metadata(depth))
    del sd
    if patcher is None:
        raise RuntimeError(f"[BCG] ComfyUI could not detect the synthetic {info.name!r} checkpoint")
    base = patcher.model
    got = (type(base.model_config).__name__, type(base).__name__)
    if got != (info.supported_model, info.model_base):
        raise RuntimeError(
            f"[BCG] synthetic {info.name!r} loaded as supported_models.{got[0]} / model_base.{got[1]}, "
            f"expected {info.supported_model} / {info.model_base}"
        )
    dm = base.diffusion_model
    if quantized:
        _check_quantized_layers(info.name, dm, quantized)
        # A quantized layer's state dict holds its scales too: the layout check covers the rest.
        shapes = {k: v for k, v in shapes.items() if k.rsplit(".", 1)[0] not in quantized}
    loaded = {k: tuple(v.shape) for k, v in dm.state_dict().items() if k.rsplit(".", 1)[0] not in quantized}
    if loaded != shapes:
        missing = sorted(set(shapes) - set(loaded))[:5]
        extra = sorted(set(loaded) - set(shapes))[:5]
        raise RuntimeError(f"[BCG] synthetic {info.name!r} key layout differs: missing {missing}, unexpected {extra}")
    blocks = tuple(len(dm.get_submodule(attr)) for attr in info.block_attrs)
    if blocks != counts:
        raise RuntimeError(f"[BCG] synthetic {info.name!r} has blocks {blocks}, expected {counts}")
    weight_dtypes = {p.dtype for name, p in dm.named_parameters() if name.rsplit(".", 1)[0] not in quantized}
    # The dtype ComfyUI chose for this model (the caller's, else from the family's supported
    # inference dtypes: fp16 first for SD3, Wan, HunyuanVideo 1.5 and OmniGen2, bf16 for most); some
    # classes build a few parameters in float32 on purpose (Wan's patch embedding, HunyuanVideo
    # 1.5's cond_type_embedding, Chroma Radiance's NeRF image embedder).
    want = options.get("dtype") or base.get_dtype()
    if want not in weight_dtypes or not weight_dtypes <= {want, torch.float32}:
        raise RuntimeError(
            f"[BCG] synthetic {info.name!r} weight dtypes {weight_dtypes}, expected {want} (float32 allowed beside it)"
        )
    if device.type == "cuda":
        comfy.model_management.soft_empty_cache()
    log.info(
        "[BCG] loaded synthetic %s: %s/%s, blocks %s, weights %s, manual cast %s, load device %s (%.1fs)",
        info.name,
        got[0],
        got[1],
        dict(zip(info.block_attrs, blocks)),
        sorted(map(str, weight_dtypes)),
        base.manual_cast_dtype,
        patcher.load_device,
        time.perf_counter() - t0,
    )
    return patcher


def save_model_file(family: str, path: str, depth=None, seed: int = 0, device=None) -> str:
    """Write the synthetic ``family`` checkpoint (bf16) as a safetensors file, the form UNETLoader
    reads from ``models/diffusion_models``; returns ``path``. ``device``: where it is generated."""
    from safetensors.torch import save_file

    sd = build_state_dict(family, depth=depth, seed=seed, device=device)
    save_file({k: v.contiguous().cpu() for k, v in sd.items()}, path, metadata=family_info(family).metadata(depth))
    return path


def load_model_file(path: str, family: str, depth=None, model_options=None, disable_dynamic: bool = False):
    """A file written by :func:`save_model_file`, loaded the way UNETLoader loads it
    (``comfy.sd.load_diffusion_model``): under Dynamic VRAM a dynamic patcher whose
    ``cached_patcher_init`` rebuilds it through this function (so ``get_non_dynamic_delegate``,
    the fixed-address twin, works as for a core loader, depth included)."""
    import inspect

    import comfy.sd

    info = family_info(family)
    options = dict(model_options or {})
    extra = (
        {"disable_dynamic": True}
        if disable_dynamic and "disable_dynamic" in inspect.signature(comfy.sd.load_diffusion_model).parameters
        else {}
    )
    with _depth_set_at_load(info, depth):
        patcher = comfy.sd.load_diffusion_model(path, model_options=options, **extra)
    patcher.cached_patcher_init = (load_model_file, (path, family, depth, options))
    return patcher


def linear_weight_keys(family: str, depth=None) -> list[str]:
    """Keys of the weights of every ``Linear`` layer of ``family`` at ``depth`` (the layers that
    fp8 and quantized checkpoints store in low precision), in checkpoint order."""
    model = _meta_model(family_info(family), depth, torch.bfloat16)
    return [f"{name}.weight" for name, mod in model.named_modules() if isinstance(mod, torch.nn.Linear)]


def block_linear_layers(family: str, depth=None) -> list[str]:
    """Names (without ``.weight``) of the ``Linear`` layers inside the family's repeated blocks, the
    layers quantized releases store in fp8 / nvfp4; embedders, final layer and the model-level
    modulation stay in bf16 there, and here."""
    info = family_info(family)
    prefixes = tuple(f"{attr}." for attr in info.block_attrs)
    return [key[: -len(".weight")] for key in linear_weight_keys(family, depth) if key.startswith(prefixes)]


#: ``quant`` for an nvfp4/fp8 mixed checkpoint (:func:`quantized_layers`).
MIXED_NVFP4_FP8 = "nvfp4+float8_e4m3fn"


def quantized_layers(family: str, depth, quant: str) -> dict[str, str]:
    """Block Linear layer -> ``comfy_quant`` format: every layer of :func:`block_linear_layers` in
    ``quant``, or for :data:`MIXED_NVFP4_FP8` the layout of the nvfp4 "mixed" releases: nvfp4,
    except the first and the last block of each stack in float8_e4m3fn (the blocks those releases
    keep at higher precision, where quantization error costs the most)."""
    layers = block_linear_layers(family, depth)
    if quant != MIXED_NVFP4_FP8:
        return {layer: quant for layer in layers}
    stacks = family_info(family).block_attrs
    index = {}  # layer -> (stack, block number)
    for layer in layers:
        stack = next(a for a in stacks if layer.startswith(f"{a}."))
        index[layer] = (stack, int(layer[len(stack) + 1 :].split(".", 1)[0]))
    last = {}
    for stack, number in index.values():
        last[stack] = max(last.get(stack, 0), number)
    return {
        layer: "float8_e4m3fn" if number in (0, last[stack]) else "nvfp4" for layer, (stack, number) in index.items()
    }


def _check_quantized_layers(family: str, model: torch.nn.Module, layers: Mapping[str, str]) -> None:
    """RuntimeError unless every layer of ``layers`` loaded with its ``comfy_quant`` format."""
    wrong = [layer for layer, fmt in layers.items() if getattr(model.get_submodule(layer), "quant_format", None) != fmt]
    if wrong:
        raise RuntimeError(
            f"[BCG] synthetic {family!r}: {len(wrong)} of {len(layers)} layers did not load quantized (first: {wrong[0]})"
        )


def _fp8_absmax(weight: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """(quantized weight, float32 scalar scale) with per-tensor absmax scaling, the recipe of
    ComfyUI's QUANTIZATION.md: ``scale = amax / finfo.max``, ``q = (w / scale).to(dtype)``."""
    w = weight.float()
    scale = (w.abs().amax() / torch.finfo(dtype).max).clamp_min(torch.finfo(torch.float32).tiny)
    return (w / scale).to(dtype), scale.reshape(())


def fp8_checkpoint(
    sd: Mapping[str, torch.Tensor], keys, dtype: torch.dtype = torch.float8_e4m3fn
) -> dict[str, torch.Tensor]:
    """A plain fp8 checkpoint (``flux1-dev-fp8``-style files): the weights named in ``keys`` cast to
    ``dtype`` with no scale and no metadata; everything else as in ``sd``. ComfyUI detects the fp8
    weight dtype and keeps fp8 storage where the device computes fp8 (``unet_dtype``) or when the
    loader asks for it (UNETLoader ``weight_dtype`` fp8_e4m3fn = ``model_options["dtype"]``),
    casting per forward (``manual_cast`` ops); elsewhere it upcasts at load."""
    keys = set(keys)
    return {k: (v.to(dtype) if k in keys else v) for k, v in sd.items()}


def scaled_fp8_checkpoint(
    sd: Mapping[str, torch.Tensor], keys, dtype: torch.dtype = torch.float8_e4m3fn
) -> dict[str, torch.Tensor]:
    """A legacy "scaled fp8" checkpoint: a ``scaled_fp8`` marker key, the weights named in ``keys``
    as ``dtype`` divided by a per-layer ``<layer>.scale_weight``. ComfyUI converts it on load
    (``comfy.utils.convert_old_quants``) into per-layer ``comfy_quant`` metadata, i.e. a
    mixed-precision model."""
    keys = set(keys)
    out: dict[str, torch.Tensor] = {"scaled_fp8": torch.zeros(0, dtype=dtype)}
    for k, v in sd.items():
        if k in keys:
            out[k], out[k[: -len("weight")] + "scale_weight"] = _fp8_absmax(v, dtype)
        else:
            out[k] = v
    return out


def comfy_quant_checkpoint(sd: Mapping[str, torch.Tensor], layers: Mapping[str, str]) -> dict[str, torch.Tensor]:
    """A mixed-precision checkpoint as ComfyUI writes and documents it (QUANTIZATION.md): each layer
    in ``layers`` (name without ``.weight`` -> format, a key of ``comfy.quant_ops.QUANT_ALGOS``)
    stored quantized with its scale tensors and a ``<layer>.comfy_quant`` JSON tensor; every other
    tensor as in ``sd`` (bf16). fp8 formats use per-tensor absmax scaling (``weight_scale``); other
    formats (nvfp4, ...) are quantized by ComfyUI's own layout (``QuantizedTensor.from_float``)."""
    import json

    out = dict(sd)
    for layer, fmt in layers.items():
        weight = out.pop(f"{layer}.weight")
        if fmt in ("float8_e4m3fn", "float8_e5m2"):
            out[f"{layer}.weight"], out[f"{layer}.weight_scale"] = _fp8_absmax(weight, getattr(torch, fmt))
        else:
            import comfy.quant_ops

            layout = comfy.quant_ops.QUANT_ALGOS[fmt]["comfy_tensor_layout"]
            if weight.dtype not in (
                torch.float16,
                torch.bfloat16,
            ):  # comfy-kitchen's CUDA nvfp4 kernel takes only these
                weight = weight.to(torch.bfloat16)
            out.update(comfy.quant_ops.QuantizedTensor.from_float(weight, layout).state_dict(f"{layer}.weight"))
        out[f"{layer}.comfy_quant"] = torch.tensor(list(json.dumps({"format": fmt}).encode("utf-8")), dtype=torch.uint8)
    return out


def make_reference_latent(family: str, width: int, height: int, seed: int = 0) -> torch.Tensor:
    """A VAE-encoded image's latent as the edit nodes (ReferenceLatent, TextEncodeQwenImageEdit)
    put it in the conditioning: ``[1, C, h, w]``, or ``[1, C, 1, h, w]`` for a family whose latent
    is 5-D (Qwen-Image's Wan VAE); ``N(0, 1)`` seeded by ``seed``."""
    info = family_info(family)
    s = info.latent_downscale
    frames = (1,) if info.latent_dimensions == 3 else ()
    gen = torch.Generator().manual_seed(int(seed))
    return torch.randn((1, info.latent_channels, *frames, height // s, width // s), generator=gen)


def with_reference_latents(conditioning, refs, method: str | None = None):
    """``conditioning`` with ``reference_latents`` set (and ``reference_latents_method``, as the
    FluxKontextMultiReferenceLatentMethod node sets it): an edit workflow's conditioning."""
    extra = {"reference_latents": list(refs)}
    if method is not None:
        extra["reference_latents_method"] = method
    return [[context, {**extras, **extra}] for context, extras in conditioning]


def latent_channels(family: str) -> int:
    return family_info(family).latent_channels


def output_latent_shape(
    family: str, width: int, height: int, batch: int = 1, frames: int | None = None
) -> tuple[int, ...]:
    """Shape of what :func:`sample` returns (Qwen-Image adds a time axis of 1; video families
    have T = (frames-1)//temporal_downscale + 1; a family with a second stream (LTX-2's audio, or
    MiniMax H3's, which its latent format adds to the empty latent) returns the streams packed
    into ``[B, 1, N]``; ``sampled_channels`` where the latent format repacks)."""
    info = family_info(family)
    channels = info.sampled_channels or info.latent_channels
    spatial = (height // info.latent_downscale, width // info.latent_downscale)
    if info.temporal_downscale is not None:
        shape = (batch, channels, ((frames or 1) - 1) // info.temporal_downscale + 1) + spatial
    elif info.latent_dimensions == 3:
        shape = (batch, channels, 1) + spatial
    else:
        shape = (batch, channels) + spatial
    if info.second_stream_shape is not None:
        second = info.second_stream_shape(info.facts, batch, frames)
        return (batch, 1, math.prod(shape[1:]) + math.prod(second[1:]))
    joint = _joint_latent_size(info, shape)
    return shape if joint is None else (batch, 1, joint)


def _joint_latent_size(info: FamilyInfo, shape: tuple[int, ...]) -> int | None:
    """Elements per batch item of the joint latent the family's latent format makes of an empty
    ``shape`` latent (``fix_empty_latent``, as :func:`sample` runs it: MiniMax H3's audio beside
    its video), asked of ComfyUI's own class so the count follows the host; None where the latent
    stays one tensor."""
    import comfy.latent_formats

    latent_format = getattr(comfy.latent_formats, info.latent_format, None)  # None: a host without the class
    fix = getattr(latent_format() if latent_format else None, "fix_empty_latent", None)  # None: no hook (0.8.0)
    made = fix(torch.zeros(shape)) if fix is not None else None
    if not getattr(made, "is_nested", False):
        return None
    return sum(math.prod(stream.shape[1:]) for stream in made.unbind())
