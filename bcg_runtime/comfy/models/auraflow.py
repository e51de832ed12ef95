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

from dataclasses import dataclass

from .base import ModelAdapter, WarmupFacts
from .recipe import FamilyInfo, frozen_config

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


@dataclass(frozen=True)
class AuraFlowFamilyInfo(FamilyInfo):
    """AuraFlow's detection counts every block in ``n_layers`` (double + single,
    model_detection.py:193-195): the depth is given per block kind (``n_double_layers``,
    ``n_single_layers``, as ``block_attrs`` count them) and ``n_layers`` is their sum."""

    def unet_config(self, depth=None) -> dict:
        double, single = self.depth_counts(depth)
        return {**dict(self.config), "n_double_layers": double, "n_layers": double + single}


#: What the warm-up's placeholder conditioning and empty latents mirror of this family (``..sampling``).
FACTS = WarmupFacts(
    text_dim=2048,
    pooled_dim=None,
    default_cond_length=T5_MIN_LENGTH,
    latent_channels=4,
)


#: The synthetic-checkpoint recipe (``..synthetic``), shaped like AuraFlow v0.3 (6.8B): 3072 wide,
#: 12 heads, 4 double and 32 single blocks, a 9216-entry (96x96) positional table, Pile-T5-XL
#: context (2048).
RECIPE = AuraFlowFamilyInfo(
    name="auraflow",
    adapter=ADAPTER,
    facts=FACTS,
    title="AuraFlow v0.3",
    ldm_class="comfy.ldm.aura.mmdit:MMDiT",
    supported_model="AuraFlow",
    model_base="AuraFlow",
    latent_format="SDXL",
    hidden_size=3072,
    num_heads=12,
    text_encoder="Pile-T5-XL, padded to 256 tokens",
    latent_dimensions=2,
    # Per block kind; the config's n_layers is their sum (AuraFlowFamilyInfo).
    depth_keys=("n_double_layers", "n_single_layers"),
    real_depth=(4, 32),
    block_attrs=("double_layers", "single_layers"),
    default_steps=25,
    default_cfg=3.5,
    config=frozen_config({"max_seq": 9216, "cond_seq_dim": 2048, "n_double_layers": 4, "n_layers": 36}),
    prompt_lengths=(T5_MIN_LENGTH, T5_MIN_LENGTH),
    # None: the real depth (6.8B, bf16 14 GB) samples 512² and 1024² in seconds on the H200.
    gpu_test_depth=None,
)
