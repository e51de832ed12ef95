"""Placeholder conditioning and one-step sampling: what the warm-up samples its planned shapes with.

:func:`make_conditioning` mirrors what the family's text encoder node returns (keys and dtypes,
from the family's :class:`~.models.base.WarmupFacts`) with random context tensors in place of an encoder;
:func:`sample` follows ``nodes.common_ksampler`` (KSampler) so ComfyUI builds the DiT calls exactly
as sampling will. The benchmark and the tests sample through the same functions (``bench.synthetic``
hands them its recipes, beside the random-weight checkpoint builder, which the product never imports).

ComfyUI is imported lazily (inside functions): importing this module needs only torch.
"""

from __future__ import annotations

import logging
import time

import torch

from .models import by_family, warmup_facts
from .models.base import ModelAdapter, WarmupFacts

log = logging.getLogger(__name__)


def family_facts(family) -> tuple[ModelAdapter, WarmupFacts]:
    """The adapter and the warm-up facts of ``family``: a family name or the name of a module beside
    it (``models.by_family``; ValueError naming the accepted ones otherwise), or an object carrying
    both as ``adapter`` and ``facts`` (a benchmark recipe, test-only ones included)."""
    if isinstance(family, str):
        return by_family(family), warmup_facts(family)
    return family.adapter, family.facts


def _name(family) -> str:
    """A family's name for messages (a benchmark recipe's ``name``)."""
    return getattr(family, "name", family)


def make_conditioning(
    family: str,
    length: int | None = None,
    seed: int = 0,
    batch: int = 1,
    guidance: float | None = None,
    text_dim: int | None = None,
):
    """A CONDITIONING list ``[[context, extras]]`` shaped like ``CLIPTextEncode``'s output.

    ``context`` is float32 on CPU, ``(batch, length, text_dim)``, ``N(0, 1)`` seeded by ``seed``;
    ``text_dim`` defaults to the family's facts' (a model of another size passes its own,
    ``ModelAdapter.text_dim``); ``length`` to their ``default_cond_length``. The extras are the
    family's (``WarmupFacts.extras``: pooled output, attention mask, guidance). Real encoders
    return batch 1. ``family``: see :func:`family_facts`.
    """
    _, facts = family_facts(family)
    if length is None:
        length = facts.default_cond_length
    if length < 1 or batch < 1:
        raise ValueError(f"length and batch must be >= 1, got length={length} batch={batch}")
    gen = torch.Generator(device="cpu").manual_seed(int(seed))
    context = torch.randn(batch, length, text_dim or facts.text_dim, generator=gen, dtype=torch.float32)
    return [[context, facts.extras(batch, length, gen, guidance)]]


def empty_latent(
    family, width: int, height: int, batch: int = 1, frames: int | None = None, latent_scale: int | None = None
) -> torch.Tensor:
    """The zeros the family's empty-latent node makes: ``[batch, channels, height//s, width//s]``
    (s = the family adapter's ``latent_scale``; channels: its facts'), float32 on ComfyUI's
    intermediate device. A 5-D image latent (Qwen-Image) comes from
    ``comfy.sample.fix_empty_latent_channels`` at sampling time. Video families
    (``temporal_downscale``) get ``[batch, channels, T, height//s, width//s]`` with
    T = (frames-1)//temporal_scale + 1 (``frames`` None: one frame); an image family takes no
    frame count. ``latent_scale`` overrides s for a member of the family with another VAE (the
    adapter's ``for_model``)."""
    import comfy.model_management

    adapter, facts = family_facts(family)
    s = latent_scale or adapter.latent_scale
    if width < s or height < s or batch < 1 or (frames is not None and frames < 1):
        raise ValueError(f"bad latent size {width}x{height} frames {frames} batch {batch}")
    spatial = [height // s, width // s]
    device = comfy.model_management.intermediate_device()
    if adapter.temporal_scale is None:
        if frames not in (None, 1):
            raise ValueError(f"{_name(family)} makes images: no frame count ({frames} given)")
        return torch.zeros([batch, facts.latent_channels] + spatial, device=device)
    t = ((frames or 1) - 1) // adapter.temporal_scale + 1
    return torch.zeros([batch, facts.latent_channels, t] + spatial, device=device)


def sample(
    model,
    family,
    width: int,
    height: int,
    steps: int,
    cfg: float,
    positive,
    negative,
    seed: int = 0,
    sampler: str = "euler",
    scheduler: str = "simple",
    batch: int = 1,
    denoise: float = 1.0,
    latent: torch.Tensor | None = None,
    frames: int | None = None,
    latent_scale: int | None = None,
    noise_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Sample like ``nodes.common_ksampler`` (KSampler): empty latent (or ``latent``),
    ``fix_empty_latent_channels``, ``prepare_noise(latent, seed)``, ``comfy.sample.sample`` with
    ``disable_pbar=True``. Returns the denoised latent on ComfyUI's intermediate device.
    ``frames`` and ``latent_scale``: see :func:`empty_latent`. ``noise_mask``: the latent's
    ``noise_mask`` (image-to-video and inpainting latent nodes set one), passed on as KSampler
    passes it. A family with a second stream
    (``WarmupFacts.second_stream_shape``: LTX-2's audio) samples the joint latent, its empty second
    stream beside the video; a joint result (that or a joint ``latent``) is returned packed, every
    stream flattened into one ``[B, 1, N]`` tensor (``comfy.utils.pack_latents``), so one
    ``torch.equal`` compares them all."""
    import comfy.sample

    _, facts = family_facts(family)
    if latent is not None:
        latent_image = latent
    else:
        latent_image = empty_latent(family, width, height, batch, frames, latent_scale)
        if facts.second_stream_shape is not None:  # LTX-2's audio beside the video (LTXVConcatAVLatent)
            import comfy.nested_tensor

            second = torch.zeros(facts.second_stream_shape(facts, batch, frames), device=latent_image.device)
            latent_image = comfy.nested_tensor.NestedTensor((latent_image, second))
    latent_image = comfy.sample.fix_empty_latent_channels(model, latent_image)
    noise = comfy.sample.prepare_noise(latent_image, seed, None)
    t0 = time.perf_counter()
    out = comfy.sample.sample(
        model, noise, steps, cfg, sampler, scheduler, positive, negative, latent_image,
        denoise=denoise, disable_pbar=True, seed=seed, noise_mask=noise_mask,
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    log.debug("[BCG] sampled %s %dx%d, %d steps, cfg %s in %.2fs", _name(family), width, height, steps, cfg, seconds)
    if getattr(
        out, "is_nested", False
    ):  # a joint latent: its streams flattened into one tensor, as the sampler runs them
        import comfy.utils

        out = comfy.utils.pack_latents(out.unbind())[0]
    return out
