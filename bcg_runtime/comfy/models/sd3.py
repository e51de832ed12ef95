"""Stable Diffusion 3 medium and 3.5 Large / Medium (``comfy.ldm.modules.diffusionmodules.mmdit``
``OpenAISignatureMMDITWrapper``, an ``MMDiT``; ``model_base.SD3``).

Where BCG sees the call: ``MMDiT.forward`` calls its blocks directly. It has no ``_forward`` and
runs no DIFFUSION_MODEL ``WrapperExecutor`` (ComfyUI 0.8.0 and 0.33.0 alike), so a wrapper alone
would never see an SD3 call. BCG Apply therefore installs, on its clone only, the object patch
``diffusion_model.forward`` (``wrappers._ForwardThroughBCG``), which runs the class's own forward
through BCG's DIFFUSION_MODEL hook (and no other node's wrapper, as stock ComfyUI runs none here).

Read for host syncs and value-dependent branches (0.33.0, ``mmdit.py``): none. ``cropped_pos_embed``
(lines 892-918) and ``unpatchify`` (920-938) branch and assert on Python ints from ``x.shape``;
``PatchEmbed`` pads by shape (100-107); ``forward_core_with_concat`` (940-988) branches on
``register_length`` (a constant, 0 for SD3),
on ``patches_replace`` (any patch makes the call eager, options.py) and on ``control``'s structure
(its tensors are arguments, in the key); ``block_mixing`` (603-610) checkpoints only under
``use_checkpoint`` (False at inference). Attention goes through ``optimized_attention`` with the
call's ``transformer_options`` (``_block_mixing``, 625/641), so the attention break covers it.

Text: the CONDITIONING context is CLIP-L and CLIP-G side by side (77 tokens per 75-token chunk,
zero-padded from 2048 to 4096 channels) followed by T5-XXL's tokens (at least 77: the tokenizer
pads with real, unmasked pad tokens; longer prompts keep their length). The DiT applies no mask,
so each context length is its own graph: a prompt of up to 75 tokens reaches the DiT as 154 tokens
(77 without T5), the usual empty negative too, so cond and uncond of short prompts share a graph.

Block count: detection reads ``depth`` = hidden width / 64 and builds that many blocks (it counts
no blocks), so fewer blocks means a narrower model: the recipe's depth sets width and block count
together (``MMDiTFamilyInfo`` in ``bench/recipes/sd3.py``).
"""

import torch

from .base import ModelAdapter, WarmupFacts

T5_DIM = 4096

ADAPTER = ModelAdapter(
    family="sd3",
    display_name="SD3",
    config_classes=("SD3",),
    max_text_length=1024,
    text_policy=(
        "exact length: CLIP-L/G (77 tokens per chunk) then T5 (at least 77, unmasked pads); "
        "prompts of up to 75 tokens reach the DiT as 154 tokens, each length is its own graph"
    ),
)


def _sd3_extras(facts, batch, length, generator, guidance):
    """CLIPTextEncode with the SD3 clip (CLIP-L + CLIP-G + T5-XXL): pooled CLIP-L and CLIP-G side by
    side (768 + 1280); no attention mask (``t5_attention_mask`` is off by default, and
    ``model_base.SD3`` passes none to the DiT)."""
    return {"pooled_output": torch.randn(batch, facts.pooled_dim, generator=generator, dtype=torch.float32)}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=T5_DIM,
    pooled_dim=2048,
    default_cond_length=154,
    latent_channels=16,
    conditioning_extras=_sd3_extras,
)
