"""AuraFlow (``AuraFlow``; ``comfy.ldm.aura.mmdit.MMDiT``, ``model_base.AuraFlow``), ComfyUI 0.8.0 and
0.33.0 (the same forward in both).

An MMDiT of 3072 wide (12 heads of 256): 4 joint (double) blocks then 32 single blocks over the
concatenated text and image tokens, 2x2 patches of the SDXL latent (4 channels, 8x), a learned
positional table of ``max_seq`` entries (96x96 for v0.2/v0.3) and 8 register tokens before the
text. The detection reads only ``max_seq``, ``cond_seq_dim`` and the block counts
(model_detection.py:188-196): width and heads are the class's defaults.

Text: the Pile-T5-XL tokenizer pads every prompt to at least 256 tokens
(``comfy/text_encoders/aura_t5.py:14``, ``min_length=256``, pad token 1, no mask reaches the
DiT), so prompts of up to 256 tokens reach the DiT as a 256-long context: cond and uncond batch
into one call and one graph serves every such prompt at a size.

Read for host syncs and value-dependent branches (0.33.0, comfy/ldm/aura/mmdit.py):

- ``TimestepEmbedder.timestep_embedding`` (l.286-297): ``torch.arange(half)`` is built on the
  host and copied to the device (``.to(t.device)``) every call: a pageable copy, which capture
  refuses. Its value is a function of ``frequency_embedding_size`` (256, the config) alone, so
  ``stage_host_copies`` stages it through a pinned buffer the graph holds; the proof replay would
  show a value that was not constant.
- ``apply_pos_embeds`` (l.422-437): the table is sliced (and, for a latent wider than the table,
  interpolated) by Python ints from ``x.shape``: shapes, in the key.
- ``patchify`` / ``unpatchify`` (l.409, l.400): shapes. ``_forward`` branches on
  ``len(self.double_layers)`` / ``len(self.single_layers)`` (the loaded model) and on
  ``patches_replace`` (options.py makes such calls eager).
- No ``.item()``, ``.tolist()``, ``.cpu()`` or mask indexing, so mode 'full' is safe.
  ``MMDiT.forward`` (l.439) runs ``_forward`` through the DIFFUSION_MODEL ``WrapperExecutor``.
"""

from .base import ModelAdapter, WarmupFacts

#: Tokens every prompt of up to 256 tokens reaches the DiT with (the tokenizer's ``min_length``).
T5_MIN_LENGTH = 256


class AuraFlowAdapter(ModelAdapter):
    def text_length_seen(self, tokens: int) -> int:
        """256 for every prompt of up to 256 tokens; longer prompts keep their length."""
        return max(T5_MIN_LENGTH, tokens)


ADAPTER = AuraFlowAdapter(
    family="auraflow",
    display_name="AuraFlow",
    config_classes=("AuraFlow",),
    max_text_length=1024,
    text_policy="natural buckets, exact: Pile-T5 pads every prompt to 256 tokens (longer prompts keep their length)",
    stage_host_copies=True,
)


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=2048,
    pooled_dim=None,
    default_cond_length=T5_MIN_LENGTH,
    latent_channels=4,
)
