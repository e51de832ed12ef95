"""Wan 2.1 / 2.2 (``comfy.ldm.wan.model.WanModel``; ``WAN21_T2V``, ``WAN21_I2V``, ``WAN22_T2V``).

One forward serves all three config classes: Wan 2.1 T2V/I2V and Wan 2.2's 14B high- and
low-noise experts (two separate models of these same classes, each with its own BCG session),
and Wan 2.2 TI2V 5B (``WAN22_T2V``: dim 3072, 48-channel ``Wan22`` latent at 16x, per-frame
timesteps ``[B, T]`` from ``WAN22.process_timestep`` when a ``denoise_mask`` is present, so its
shape is in the key). Latents are 5-D ``[B,C,T,H,W]``; labels count pixel frames as ComfyUI's
empty video latent nodes do: frames = (T-1)*4 + 1 (``832x480x33f txt512 b2``).

Text: ComfyUI's umT5 tokenizer pads every prompt to 512 tokens (``min_length=512``, pad rows
zeroed by ``zero_out_masked``), so the DiT receives every prompt of up to 512 tokens as a 512-long
context: cond and uncond share one graph and batch together (b2). Longer prompts keep their
length. The DiT itself does not pad (``text_len`` is stored, never used in the forward).

I2V: the image latent and mask reach the DiT concatenated into ``x`` (``c_concat``: 36 channels),
CLIP-vision features as ``clip_fea`` ``[B, 257, 1280]``; FLF2V, Bernini ``context_latents`` (a
list of tensors) and ``reference_latent`` are more keyword tensors. Every one of them is an
argument the key sees by shape (their values are copied into the graph's inputs).

Read for host syncs and value-dependent branches (ComfyUI 0.33.0, comfy/ldm/wan/model.py; 0.8.0
has the same forward without patches, ``context_latents`` and the INT8 feed-forward):

- ``repeat_e`` (l.167) and ``WanAttentionBlock.forward`` / ``Head.forward`` ``e.ndim`` branches
  (l.248, l.379): shapes only (scalar vs per-frame timesteps), harmless.
- ``WanFeedForward`` -> ``comfy.ops.linear_input_act`` (l.182, ops.py l.958): branches on the
  weight's type (INT8 or not), a fact of the loaded model, harmless.
- ``_forward`` (l.686): ``pad_to_patch_size``, ``t_len``, ``rope_encode`` (l.638) use shapes and
  ``rope_options`` (keyed by options.py); ``torch.linspace`` bounds are Python numbers from those.
  ``if clip_fea is not None`` / ``context_latents`` / ``"reference_latent" in kwargs``: presence
  of arguments, in the key. ``unpatchify`` ``math.prod(grid_sizes)`` (l.718): shapes.
- ``forward_orig`` writes ``transformer_options["grid_sizes"]`` (l.567): bookkeeping derived from
  shapes (options.py ignores it, like Flux's ``img_slice``). ``patches`` / ``patches_replace``
  make the call eager (options.py).
- ``sinusoidal_embedding_1d`` (l.28) builds ``torch.arange(half)`` on the host and copies it to
  the GPU (``.to(position)``) every call: a pageable copy, which capture refuses. Its value is a
  function of ``freq_dim`` (the model's config) alone, so ``stage_host_copies`` stages it through a
  pinned buffer the graph holds (``bcg_runtime/core/host_copies.py``); the proof replay would
  show a value that was not constant.
- No ``.item()``, ``.tolist()``, ``.cpu()``, ``nonzero`` or boolean-mask indexing in the forward,
  so mode 'full' is safe. The forward goes through the DIFFUSION_MODEL wrapper
  (``WanModel.forward`` -> ``WrapperExecutor`` around ``_forward``, l.679) in both hosts.
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
