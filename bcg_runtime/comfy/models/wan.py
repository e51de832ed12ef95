"""Wan 2.1 / 2.2 (``comfy.ldm.wan.model.WanModel``; ``WAN21_T2V``, ``WAN21_I2V``, ``WAN22_T2V``).

One forward serves Wan 2.1 T2V / I2V, Wan 2.2's 14B high- and low-noise experts (two models, each
with its own BCG session) and Wan 2.2 TI2V 5B (48-channel latent at 16x; per-frame timesteps
``[B, T]`` with a ``denoise_mask``, their shape in the key). Latents are 5-D; labels count pixel
frames, (T-1)*4 + 1 (``832x480x33f txt512 b2``). Nothing is keyed beyond the tensors' shapes and
nothing is refused: I2V's image channels in ``x``, ``clip_fea``, FLF2V, Bernini ``context_latents``
and ``reference_latent`` are tensor arguments, their values copied into the graph's inputs. Text:
umT5 pads every prompt to 512 tokens, so prompts of up to 512 tokens share one graph and cond and
uncond batch (b2); longer prompts keep their length. ``sinusoidal_embedding_1d`` copies a
host-built ``torch.arange(half)`` to the GPU every call, a function of ``freq_dim`` (the config)
alone: ``stage_host_copies`` stages it through a pinned buffer the graph holds. No other op syncs
with the host, so mode 'full' is safe. Source audit: tests/comfy/test_wan.py.
"""

import dataclasses

from .base import ModelAdapter, WarmupFacts


class WanAdapter(ModelAdapter):
    UMT5_MIN_LENGTH = 512

    def text_length_seen(self, tokens: int) -> int:
        return max(self.UMT5_MIN_LENGTH, tokens)

    def for_model(self, model_patcher):
        """Wan 2.2 5B's latent (``Wan22``, 48 channels) is 16x; the others' (``Wan21``) 8x. 0.33
        says so in ``spacial_downscale_ratio``; 0.8.0's formats have no such attribute, and there
        the 48-channel format is the 16x one."""
        fmt = getattr(getattr(model_patcher, "model", None), "latent_format", None)
        if fmt is None:
            return self
        scale = getattr(fmt, "spacial_downscale_ratio", None) or (
            16 if getattr(fmt, "latent_channels", None) == 48 else self.latent_scale
        )
        return self if scale == self.latent_scale else dataclasses.replace(self, latent_scale=scale)


ADAPTER = WanAdapter(
    family="wan",
    display_name="Wan",
    config_classes=("WAN21_T2V", "WAN21_I2V", "WAN22_T2V"),
    max_text_length=1024,
    text_policy="natural buckets, exact: umT5 pads every prompt to 512 tokens (longer prompts keep their length)",
    latent_scale=8,
    temporal_scale=4,
    stage_host_copies=True,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=4096,
    pooled_dim=None,
    default_cond_length=512,
    latent_channels=16,
)


def variant(family: str, display_name: str, config_classes: tuple[str, ...], **fields) -> WanAdapter:
    """The adapter of a Wan 2.x variant (VACE, Fun Control, Camera, S2V, HuMo, SCAIL, ...): Wan's
    umT5 text policy, 5-D latents at 8x / 4x and host-copy staging (every variant embeds timesteps
    with ``sinusoidal_embedding_1d``). Every variant passed its own GPU tests on the H200 (twins and
    full size, both modes, ComfyUI 0.33.0); a new variant passes ``gpu_verified=False`` until its
    own do. The variant's module docstring names what its forward adds and how each input reaches
    the key."""
    return dataclasses.replace(
        ADAPTER, family=family, display_name=display_name, config_classes=tuple(config_classes), **fields
    )
