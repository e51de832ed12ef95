"""Stable Diffusion 3.5 Large: the synthetic-checkpoint recipe ``sd3`` (a tool). The adapter and warm-up facts it
reads are ``bcg_runtime/comfy/models/sd3.py``'s, which never imports this."""

from dataclasses import dataclass

from bcg_runtime.comfy.models.sd3 import ADAPTER, FACTS, T5_DIM

from ..recipe import FamilyInfo, frozen_config

#: MMDiT's head width: ``hidden_size = 64 * depth`` with ``depth`` heads (mmdit.py:810-811).
HEAD_DIM = 64


@dataclass(frozen=True)
class MMDiTFamilyInfo(FamilyInfo):
    """MMDiT's width follows its depth (``hidden = 64 * depth``): the context embedder's output
    width follows the block count too, so a reduced-depth checkpoint is detected as what it is."""

    def unet_config(self, depth=None) -> dict:
        cfg = super().unet_config(depth)
        (blocks,) = self.depth_counts(depth)
        params = dict(cfg["context_embedder_config"]["params"], out_features=HEAD_DIM * blocks)
        cfg["context_embedder_config"] = {"target": cfg["context_embedder_config"]["target"], "params": params}
        return cfg


#: The synthetic-checkpoint recipe (``..synthetic``), shaped like SD3.5 Large: hidden 2432 (38 heads
#: of 64), 38 joint blocks, RMS q/k norm, 2x2 patches of 16 channels (64 per token), a 192x192
#: position table, pooled 2048, T5 context 4096. Reduced depth narrows the model (see above).
RECIPE = MMDiTFamilyInfo(
    name="sd3",
    adapter=ADAPTER,
    facts=FACTS,
    title="Stable Diffusion 3.5 Large",
    ldm_class="comfy.ldm.modules.diffusionmodules.mmdit:OpenAISignatureMMDITWrapper",
    supported_model="SD3",
    model_base="SD3",
    latent_format="SD3",
    hidden_size=2432,
    num_heads=38,
    text_encoder="CLIP-L + CLIP-G (77 tokens, 4096 wide) then T5-XXL (at least 77 tokens)",
    latent_dimensions=2,
    depth_keys=("depth",),
    real_depth=(38,),
    block_attrs=("joint_blocks",),
    default_steps=28,
    default_cfg=4.5,
    config=frozen_config(
        {
            "in_channels": 16,
            "patch_size": 2,
            "out_channels": 16,
            "depth": 38,
            "input_size": None,
            "adm_in_channels": 2048,
            "context_embedder_config": {
                "target": "torch.nn.Linear",
                "params": {"in_features": T5_DIM, "out_features": 2432},
            },
            "num_patches": 36864,
            "pos_embed_max_size": 192,
            "qk_norm": "rms",
            "pos_embed_scaling_factor": None,
            "x_block_self_attn_layers": [],
        }
    ),
    # A 120-token T5 prompt (77 + 120) against the usual empty negative (77 + 77): apart.
    prompt_lengths=(197, 154),
    # None: the real 38 blocks. Fewer blocks would also narrow the model (hidden = 64 * depth), and
    # SD3.5 Large (8B, bf16 16 GB) samples 512² and 1024² for 3 steps in seconds on the H200.
    gpu_test_depth=None,
)
