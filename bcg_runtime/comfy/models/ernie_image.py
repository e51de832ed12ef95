"""ERNIE-Image (``supported_models.ErnieImage``: ``comfy.ldm.ernie.model.ErnieImageModel``), in
ComfyUI 0.33.0 (0.8.0 has no such class).

A single-stream DiT: image and text tokens concatenated (image first) through 36 shared-AdaLN
blocks, hidden 4096, 32 heads of 128, feed-forward 12288, FLUX.2's 128-channel latent at 16x with
patch 1, a Ministral-3-3B caption (hidden layer -2, 3072 wide). Detection (0.33.0
``model_detection.py:1112``) returns only ``image_model``: every size is the class's default, so a
reduced-depth test model gets its layer count at load (``FamilyInfo.depth_fixed_by_detection``).

Text: the Mistral-3 tokenizer does not pad (``pad_to_max_length=False``), ``model_base.ErnieImage``
passes the context alone (the encoder's all-ones attention mask is dropped), and the image tokens'
RoPE time index is the caption's length (``model.py:261``): each caption length is its own graph,
and padding would move the image positions. Cond and uncond of different lengths run as two
batch-1 calls (``c_crossattn`` is a ``CONDRegular``).

Read for host syncs and value-dependent branches (ComfyUI 0.33.0, ``comfy/ldm/ernie/model.py``):

- ``:13`` ``rope`` computes in float64 on the CPU where the device has no float64 (MPS, XPU,
  DirectML): a device round trip. CUDA has float64, so on CUDA it stays on the device.
- ``:253`` ``text_bth.numel() > 0``: a shape. ``:259-279`` text and image position ids from
  ``torch.linspace`` over Python numbers (shapes and ``rope_options``, which is in the key).
- ``:115`` ``comfy_kitchen`` ``rms_rope_split_half``: the backend is picked from shapes, strides and
  dtypes, no host read; ``in_training`` is a process flag.
- ``:130`` attention without a mask (the block is never given one).
- ``:294`` the layer loop and ``:299`` the image slice: counts from the config and shapes.

No op syncs with the host, so mode 'full' is safe. The class has no ``_forward``: its ``forward``
never runs ComfyUI's DIFFUSION_MODEL wrappers, so BCG reaches its calls through
``wrappers._ForwardThroughBCG`` (the object patch ``diffusion_model.forward``), as for SD3.
"""

from .base import ModelAdapter, WarmupFacts

ADAPTER = ModelAdapter(
    family="ernie_image",
    display_name="ERNIE-Image",
    config_classes=("ErnieImage",),
    max_text_length=1024,
    text_policy="exact length: Ministral-3 captions are unpadded and image positions follow them; each caption length is its own graph",
    latent_scale=16,
)

#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=3072,
    pooled_dim=None,
    default_cond_length=64,
    latent_channels=128,
)
