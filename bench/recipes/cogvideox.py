"""CogVideoX-5B: the synthetic-checkpoint recipe ``cogvideox`` (a tool). The adapter and warm-up facts it reads are
``bcg_runtime/comfy/models/cogvideox.py``'s, which never imports this."""

from bcg_runtime.comfy.models.cogvideox import ADAPTER, FACTS, T5_MIN_LENGTH

from ..recipe import FamilyInfo, frozen_config

#: The synthetic-checkpoint recipe (``..synthetic``), shaped like CogVideoX-5B (text-to-video):
#: 48 heads of 64 (3072 wide), 42 blocks, time embedding 512, 2x2 Conv2d patches of the 16-channel
#: latent, 3-D RoPE, T5-XXL context (4096). Detection picks the 5B latent scale (``CogVideoX1_5``,
#: supported_models.py:2421) from the head count.
RECIPE = FamilyInfo(
    name="cogvideox",
    adapter=ADAPTER,
    facts=FACTS,
    title="CogVideoX-5B",
    ldm_class="comfy.ldm.cogvideo.model:CogVideoXTransformer3DModel",
    supported_model="CogVideoX_T2V",
    model_base="CogVideoX",
    latent_format="CogVideoX1_5",
    hidden_size=3072,
    num_heads=48,
    text_encoder="T5-XXL, padded to 226 tokens",
    latent_dimensions=3,
    depth_keys=("num_layers",),
    real_depth=(42,),
    block_attrs=("blocks",),
    default_steps=50,
    default_cfg=6.0,
    config=frozen_config(
        {
            "image_model": "cogvideox",
            "num_attention_heads": 48,
            "attention_head_dim": 64,
            "time_embed_dim": 512,
            "num_layers": 42,
            "in_channels": 16,
            "patch_size": 2,
            "text_embed_dim": 4096,
            "use_learned_positional_embeddings": False,
            "use_rotary_positional_embeddings": True,
        }
    ),
    prompt_lengths=(T5_MIN_LENGTH, T5_MIN_LENGTH),
    # The real width at a third of the depth: the full-size test samples up to 1024² (16k tokens a
    # frame), where 42 blocks would take minutes of the suite's time.
    gpu_test_depth=14,
)
