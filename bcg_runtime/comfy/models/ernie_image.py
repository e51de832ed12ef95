"""ERNIE-Image (``supported_models.ErnieImage``: ``comfy.ldm.ernie.model.ErnieImageModel``), in
ComfyUI 0.33.0 (0.8.0 has no such class).

A single-stream DiT (image tokens then text tokens) over FLUX.2's 128-channel latent at 16x with a
Ministral-3-3B caption. Nothing is keyed beyond the tensors' shapes (and ``rope_options``, keyed
by options.py) and nothing is refused. Text: the tokenizer does not pad, ``model_base.ErnieImage``
drops the encoder's all-ones mask, and the image tokens' RoPE time index is the caption's length:
each caption length is its own graph (padding would move the image positions); cond and uncond of
different lengths run as two batch-1 calls. The class has no ``_forward`` and runs no
DIFFUSION_MODEL wrappers, so BCG reaches its calls through ``wrappers._ForwardThroughBCG`` (the
object patch ``diffusion_model.forward``), as for SD3. No op syncs with the host on CUDA (``rope``
leaves the device only where it has no float64), so mode 'full' is safe. Source audit:
tests/comfy/test_ernie_image.py.
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
