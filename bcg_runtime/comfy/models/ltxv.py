"""LTX-Video (``comfy.ldm.lightricks.model.LTXVModel``; ``LTXV``), text-to-video and image-to-video.

Latents are 5-D ``[B, 128, T, H/32, W/32]`` (``EmptyLTXVLatentVideo``: T = (frames-1)//8 + 1);
labels count pixel frames (``768x512x97f txt128 b2``). Text: ComfyUI's LTXV T5 tokenizer pads
every prompt to 128 tokens (``min_length=128``) and the encoder returns an ``attention_mask`` that
``model_base.LTXV`` hands to the DiT: every prompt of up to 128 tokens reaches the DiT as a
128-long context with its mask (a tensor argument, values copied at every replay), so one graph
serves them all, exactly as stock ComfyUI computes them; cond and uncond batch into one call.
Longer prompts keep their length. ``frame_rate`` (LTXVConditioning, a ``CONDConstant``) reaches
the forward as a Python number and scales the RoPE time axis: its value is in the key.
Image-to-video (LTXVImgToVideo) sets a noise mask: ``model_base.LTXV.process_timestep`` turns it
into per-token timesteps ``[B, tokens]`` before the DiT (their shape is in the key) and the mask
reaches the DiT as ``denoise_mask``, read only on the keyframe path below.

Read for host syncs and value-dependent branches (ComfyUI 0.33.0, comfy/ldm/lightricks/model.py;
the forward goes through the DIFFUSION_MODEL wrapper, ``forward`` -> ``WrapperExecutor`` around
``_forward`` (l.947-972), in both hosts):

- Keyframe guides (LTXVAddGuide: ``keyframe_idxs``), ``_process_input`` l.1119-1171: a boolean
  token mask computed from ``denoise_mask`` *values* (``grid_mask``, l.1131) indexes ``x``,
  ``pixel_coords`` and ``keyframe_idxs`` (data-dependent shapes), ``.item()`` counts each guide's
  surviving tokens (l.1154), and ``_build_guide_self_attention_mask`` branches on
  ``(tracked_weights == 1.0).all()`` (l.1318); ``_prepare_timestep`` (l.867) and
  ``_process_output`` (l.1433) index with the mask again. Refused: a call with ``keyframe_idxs``
  runs eager with :data:`KEYFRAME_REFUSAL` (0.8.0 takes that path for any non-None
  ``keyframe_idxs``, so any is refused). Without guides that code is skipped by a shape test.
- ``keyframes_abs_pos_mask`` (l.1186, checkpoints with ``keyframes_abs_pos_embedding`` only): slices
  by Python ints from shapes and the ``generated_keyframes`` dict (constants, in the key).
- ``_prepare_positional_embeddings`` (l.925): ``frame_rate`` is a Python number (in the key).
  With ``frequencies_precision="float64"`` (a checkpoint's metadata config) the frequency grid is
  numpy on the host (``generate_freq_grid_np``, lru-cached) and copied to the device each call.
- Device constants from Python lists: ``latent_to_pixel_coords`` (symmetric_patchifier.py l.28)
  and ``get_latent_coords`` (l.78) call ``torch.tensor(list, device=...)``, and
  ``precompute_freqs_cis`` copies a host-built index grid to the device (``.to(device=...)``,
  model.py l.641/674), as does the float64 grid above: pageable host-to-device copies, which
  capture refuses (seen on the H200, torch 2.11). Their values come from the patch size, the VAE
  scale factors and the RoPE config (the model's config, and shapes in the key), so
  ``stage_host_copies`` stages them through pinned buffers the graph holds
  (``bcg_runtime/core/host_copies.py``); the proof replay would show a value that was not constant.
- ``CrossAttention.forward`` reads ``transformer_options["stg_skip_self_attn"]`` (STG node): an
  entry options.py does not know, so such calls run eager. ``patches_replace`` likewise.
- No other ``.item()``, ``.tolist()``, ``.cpu()``, ``nonzero`` or boolean-mask indexing outside the
  keyframe path, so mode 'full' is safe.
"""

from typing import Any

import torch

from .base import ModelAdapter, WarmupFacts

#: Why a call with keyframe guides runs eager.
KEYFRAME_REFUSAL = (
    "LTXV keyframe guides (keyframe_idxs): the forward selects tokens by the denoise mask's values "
    "and counts them on the host, which a graph cannot replay"
)


class LTXVAdapter(ModelAdapter):
    T5_MIN_LENGTH = 128

    def text_length_seen(self, tokens: int) -> int:
        return max(self.T5_MIN_LENGTH, tokens)

    def refusal(self, call: dict[str, Any]) -> str | None:
        if call.get("keyframe_idxs") is not None:
            return KEYFRAME_REFUSAL
        return None


ADAPTER = LTXVAdapter(
    family="ltxv",
    display_name="LTX-Video",
    config_classes=("LTXV",),
    max_text_length=512,
    text_policy="natural buckets, exact: T5 pads every prompt to 128 tokens with a mask (longer prompts keep their length)",
    latent_scale=32,
    temporal_scale=8,
    stage_host_copies=True,
)


def _ltxv_extras(facts, batch, length, generator, guidance):
    """CLIPTextEncode with the LTXV T5-XXL: no pooled output; an attention mask over the padded
    context, ones for the prompt's tokens and zeros for the pads (a random prompt length, so two
    conditionings of one context length carry different masks, as two real prompts do)."""
    real = int(torch.randint(1, length + 1, (1,), generator=generator))
    mask = torch.zeros(batch, length, dtype=torch.long)
    mask[:, :real] = 1
    return {"pooled_output": None, "attention_mask": mask}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=4096,
    pooled_dim=None,
    default_cond_length=128,
    latent_channels=128,
    conditioning_extras=_ltxv_extras,
)
