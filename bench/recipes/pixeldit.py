"""PixelDiT T2I: the synthetic-checkpoint recipe ``pixeldit`` (a tool). The adapter and warm-up facts it reads are
``bcg_runtime/comfy/models/pixeldit.py``'s, which never imports this."""

import torch

from bcg_runtime.comfy.models.pixeldit import ADAPTER, CONTEXT_LENGTH, FACTS

from ..recipe import FamilyInfo, frozen_config


def released_layout(prefix: str):
    """``checkpoint_layout`` of a released PixelDiT-family file: every key under ``prefix``, and
    each pixel block's ``adaLN_modulation_msa`` / ``_mlp`` pair fused back into the one
    ``adaLN_modulation.0`` Linear the file holds (``[p2, 6, pixel_dim, ...]``, chunks 0-2 msa and
    3-5 mlp: the inverse of ``process_unet_state_dict``'s split)."""

    def layout(recipe, sd: dict) -> dict:
        pixel_dim = sd["pixel_embedder.proj.weight"].shape[0]
        out = {}
        for key, value in sd.items():
            if "pixel_blocks." in key and ".adaLN_modulation_mlp." in key:
                continue
            if "pixel_blocks." in key and ".adaLN_modulation_msa." in key:
                base, suffix = key.split(".adaLN_modulation_msa.")
                mlp = sd[f"{base}.adaLN_modulation_mlp.{suffix}"]
                p2, trail = value.shape[0] // (3 * pixel_dim), value.shape[1:]
                fused = torch.cat([value.view(p2, 3, pixel_dim, *trail), mlp.view(p2, 3, pixel_dim, *trail)], dim=1)
                out[f"{prefix}{base}.adaLN_modulation.0.{suffix}"] = fused.reshape(
                    6 * p2 * pixel_dim, *trail
                ).contiguous()
            else:
                out[prefix + key] = value
        return out

    return layout


#: The synthetic-checkpoint recipe (``..synthetic``), shaped like PixelDiT T2I at the class's
#: defaults (its detection reads nothing but the family, model_detection.py:573-574): 14 patch
#: blocks of 24 heads (1536 wide), 2 pixel blocks (16 per pixel, attention 1152 wide), 16-pixel
#: patches, Gemma-2-2B context (2304), 300 text positions.
RECIPE = FamilyInfo(
    name="pixeldit",
    adapter=ADAPTER,
    facts=FACTS,
    title="PixelDiT T2I",
    ldm_class="comfy.ldm.pixeldit.model:PixDiT_T2I",
    supported_model="PixelDiTT2I",
    model_base="PixelDiTT2I",
    latent_format="PixelDiTPixel",
    hidden_size=1536,
    num_heads=24,
    text_encoder="Gemma-2-2B, padded to 300 tokens",
    latent_dimensions=2,
    depth_keys=("patch_depth", "pixel_depth"),
    real_depth=(14, 2),
    block_attrs=("patch_blocks", "pixel_blocks"),
    default_steps=25,
    default_cfg=4.0,
    config=frozen_config({"image_model": "pixeldit_t2i"}),
    prompt_lengths=(CONTEXT_LENGTH, CONTEXT_LENGTH),
    depth_fixed_by_detection=True,
    checkpoint_layout=released_layout("core."),
    # None: the real depth (about 1B) samples 512² and 1024² quickly on the H200.
    gpu_test_depth=None,
)
