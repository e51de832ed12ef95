"""MiniMax H3 (audio + video): the synthetic-checkpoint recipe ``minimax_h3`` (a tool). The adapter and warm-up
facts it reads are ``bcg_runtime/comfy/models/minimax_h3.py``'s, which never imports this."""

from bcg_runtime.comfy.models.minimax_h3 import ADAPTER, FACTS

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like MiniMax H3: 50 blocks of 5376
#: (56 heads of 128, FFN 14336), a 2-layer token refiner over the Qwen3-VL 32B context (5120),
#: the time embedder form (not the adaLN curve basis); video latent 24 channels at 16x spatial,
#: audio 32 x 2 channels. Detection reads every width and both depths from the key layout.
RECIPE = FamilyInfo(
    name="minimax_h3",
    adapter=ADAPTER,
    facts=FACTS,
    title="MiniMax H3 (audio + video)",
    ldm_class="comfy.ldm.minimax.model:MiniMaxH3Model",
    supported_model="MiniMaxH3",
    model_base="MiniMaxH3",
    latent_format="MiniMaxH3AV",
    hidden_size=5376,
    num_heads=56,
    text_encoder="Qwen3-VL 32B (50 layers), the prompt's own tokens, with per-token modality tags",
    latent_dimensions=3,
    depth_keys=("num_layers", "token_refiner_num_layers"),
    real_depth=(50, 2),
    block_attrs=("blocks", "token_refiner.blocks"),
    default_steps=30,
    default_cfg=5.0,
    config=frozen_config(
        {
            "image_model": "minimax_h3",
            "num_layers": 50,
            "token_refiner_num_layers": 2,
            "hidden_size": 5376,
            "latents_dim": 24,
            "audio_latents_dim": 32,
            "attention_head_dim": 128,
            "num_attention_heads": 56,
            "ffn_hidden_size": 14336,
            "text_dim": 5120,
            "timestep_input_dim": 256,
            "time_embed_hidden_size": 5376,
            "time_embed_dim": 2688,
            "rope_inv_freq_len": 16,
        }
    ),
    #: About 30B parameters (60 GB in bf16): the GPU test samples a third of the blocks at full width.
    gpu_test_depth=(16, 2),
)
