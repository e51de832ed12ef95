"""CogVideoX (``comfy.ldm.cogvideo.model.CogVideoXTransformer3DModel``, ``model_base.CogVideoX``;
``CogVideoX_T2V``, ``CogVideoX_I2V``, ``CogVideoX_Inpaint``), ComfyUI 0.33.0 only (0.8.0 has no
such class: its tests skip there).

One forward serves the three config classes; they differ in the input channels of ``x``:
text-to-video 16, image-to-video 32 (the start image's latent as 16 more channels, ``c_concat``),
inpaint 48 (the masked video and its mask, 32 more), built by ``model_base.CogVideoX.concat_cond``
(model_base.py:2798-2837: zeros where the conditioning has no ``concat_latent_image``). CogVideoX
1.0 patches 2x2 with a Conv2d, 1.5 2x2x2 with a Linear (``patch_size_t``, detection
model_detection.py:659-667); RoPE or a learned positional table (present in the checkpoint or
not, :678-684). Latents are 5-D ``[B,16,T,H,W]`` at 8x spatial and 4x temporal; labels count
pixel frames (``64x64x5f txt226 b2``). This module is the text-to-video family; the other two
classes' modules are ``cogvideox_i2v.py`` and ``cogvideox_inpaint.py`` (each class's
synthetic-checkpoint recipe: ``bench/recipes/`` under the same name).

Text: the CogVideoX T5-XXL tokenizer pads every prompt to at least 226 tokens
(``comfy/text_encoders/cogvideo.py:13``, ``min_length=226``), and no mask reaches the DiT: prompts
of up to 226 tokens reach the DiT as a 226-long context, so cond and uncond batch into one call.

Read for host syncs and value-dependent branches (0.33.0, comfy/ldm/cogvideo/model.py):

- ``get_timestep_embedding`` (l.49-58), ``_get_1d_rotary_pos_embed`` (l.18-24),
  ``get_3d_sincos_pos_embed`` (l.61-81) and ``_get_rotary_emb`` (l.516-573): ``arange`` /
  ``linspace`` made on the device from Python numbers (shapes and the config); nothing copied
  from the host.
- ``CogVideoXPatchEmbed.forward`` (l.158-199): the learned table is sliced by the patch count
  (a shape); ``joint_pos[:, text_seq_length:] = image_pos`` writes a tensor the forward just made.
- ``_forward`` (l.444-513): ``ofs`` (CogVideoX 1.5 I2V's ``torch.full`` from ``extra_conds``,
  model_base.py:2841-2847) is a tensor argument, in the key by shape and presence; padding,
  patching and unpatchifying follow shapes.
- No ``.item()``, ``.tolist()``, ``.cpu()`` or mask indexing, so mode 'full' is safe.
  ``CogVideoXTransformer3DModel.forward`` (l.435) runs ``_forward`` through the DIFFUSION_MODEL
  ``WrapperExecutor``.
"""

from .base import ModelAdapter, WarmupFacts

#: Tokens every prompt of up to 226 tokens reaches the DiT with (the tokenizer's ``min_length``).
T5_MIN_LENGTH = 226


class CogVideoXAdapter(ModelAdapter):
    def text_length_seen(self, tokens: int) -> int:
        """226 for every prompt of up to 226 tokens; longer prompts keep their length."""
        return max(T5_MIN_LENGTH, tokens)


ADAPTER = CogVideoXAdapter(
    family="cogvideox",
    display_name="CogVideoX",
    config_classes=("CogVideoX_T2V", "CogVideoX_I2V", "CogVideoX_Inpaint"),
    max_text_length=1024,
    text_policy="natural buckets, exact: T5-XXL pads every prompt to 226 tokens (longer prompts keep their length)",
    latent_scale=8,
    temporal_scale=4,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=4096,
    pooled_dim=None,
    default_cond_length=T5_MIN_LENGTH,
    latent_channels=16,
)
