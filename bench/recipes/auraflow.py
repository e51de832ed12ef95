"""AuraFlow v0.3: the synthetic-checkpoint recipe ``auraflow`` (a tool). The adapter and warm-up facts it reads are
``bcg_runtime/comfy/models/auraflow.py``'s, which never imports this."""

from dataclasses import dataclass

from bcg_runtime.comfy.models.auraflow import ADAPTER, FACTS, T5_MIN_LENGTH

from ..recipe import FamilyInfo, frozen_config


@dataclass(frozen=True)
class AuraFlowFamilyInfo(FamilyInfo):
    """AuraFlow's detection counts every block in ``n_layers`` (double + single,
    model_detection.py:193-195): the depth is given per block kind (``n_double_layers``,
    ``n_single_layers``, as ``block_attrs`` count them) and ``n_layers`` is their sum."""

    def unet_config(self, depth=None) -> dict:
        double, single = self.depth_counts(depth)
        return {**dict(self.config), "n_double_layers": double, "n_layers": double + single}


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
