"""AuraFlow (``AuraFlow``; ``comfy.ldm.aura.mmdit.MMDiT``, ``model_base.AuraFlow``), ComfyUI 0.8.0 and
0.33.0 (the same forward in both).

An MMDiT (4 joint then 32 single blocks, 3072 wide) over 2x2 patches of the SDXL latent, with a
learned positional table sliced (or interpolated) by the latent's shape. Nothing is keyed beyond
the tensors' shapes and nothing is refused. Text: the Pile-T5-XL tokenizer pads every prompt to at
least 256 tokens (no mask reaches the DiT), so prompts of up to 256 tokens share one graph per size
and cond and uncond batch into one call. ``TimestepEmbedder.timestep_embedding`` copies a
host-built ``torch.arange(half)`` to the device every call, a pageable copy capture refuses; its
value depends on ``frequency_embedding_size`` (the config) alone, so ``stage_host_copies`` stages
it through a pinned buffer the graph holds. No other op syncs with the host, so mode 'full' is
safe. Source audit: tests/comfy/test_auraflow.py.
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
