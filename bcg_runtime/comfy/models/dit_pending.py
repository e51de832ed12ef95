"""Diffusion transformers of ComfyUI 0.33.0 that BCG does not serve yet (no adapter, recipe or
tests), each with what its forward shows (read in 0.33.0, comfy/ldm/...). This module defines no
``ADAPTER`` and no ``RECIPE``: it is no family; BCG Apply leaves these models unchanged and shows
the reason. ``refused`` marks a class whose forward BCG cannot serve as it is; ``not supported
yet`` one that needs an adapter, a recipe and its tests (CPU stand-in and H200).

Never reach BCG's hook: BCG serves a DiT call from ComfyUI's ``WrappersMP.DIFFUSION_MODEL``
wrapper, which a model's ``forward`` must run through (``WrapperExecutor``). PixArt
(``pixart/pixartms.py:219``), Mochi (``genmo/joint_model/asymm_models_joint.py:487``) and Boogu
(``boogu/model.py:255``) call their ``_forward`` body directly, so BCG Apply would install a
wrapper their calls never enter.
"""

_YET = "not supported yet (no adapter, recipe or tests): "

#: ``comfy.supported_models`` class -> why BCG does not serve it (one line each).
UNSUPPORTED_REASONS = {
    "PixArtAlpha": (
        "refused: PixArtMS.forward (comfy/ldm/pixart/pixartms.py:219) does not run through ComfyUI's DIFFUSION_MODEL "
        "wrapper, BCG's hook; with a text mask it also packs tokens by value (masked_select and mask.sum().tolist(), "
        ":206-207, a host sync and value-dependent shapes)"
    ),
    "PixArtSigma": (
        "refused: PixArtMS.forward (comfy/ldm/pixart/pixartms.py:219) does not run through ComfyUI's DIFFUSION_MODEL "
        "wrapper, BCG's hook; with a text mask it also packs tokens by value (masked_select and mask.sum().tolist(), "
        ":206-207, a host sync and value-dependent shapes)"
    ),
    "GenmoMochi": (
        "refused: AsymmDiTJoint.forward (comfy/ldm/genmo/joint_model/asymm_models_joint.py:487) does not run through "
        "ComfyUI's DIFFUSION_MODEL wrapper, BCG's hook"
    ),
    "Boogu": (
        "refused: BooguTransformer2DModel.forward (comfy/ldm/boogu/model.py:255) does not run through ComfyUI's "
        "DIFFUSION_MODEL wrapper, BCG's hook"
    ),
    "AuraFlow": _YET + "MMDiT (comfy/ldm/aura/mmdit.py:439) runs through the wrapper; its learned positional table is sliced by the latent's shape (apply_pos_embeds, :422), no host sync found",
    "CogVideoX_T2V": _YET + "CogVideoXTransformer3DModel (comfy/ldm/cogvideo/model.py:435) runs through the wrapper; RoPE and timestep embeddings are built on the device from shapes (:18-24, :51, :94)",
    "CogVideoX_I2V": _YET + "CogVideoXTransformer3DModel (comfy/ldm/cogvideo/model.py:435), the image latent as channels of x, the ofs embedding a tensor argument",
    "CogVideoX_Inpaint": _YET + "CogVideoXTransformer3DModel (comfy/ldm/cogvideo/model.py:435), masked video and mask as channels of x",
    "JoyImage": _YET + "JoyImageTransformer3DModel (comfy/ldm/joyimage/model.py:365) runs through the wrapper; no host sync found by a scan of the forward",
    "Lens": _YET + "LensTransformer2DModel (comfy/ldm/lens/model.py:366) runs through the wrapper; the joint mask is built on the device (:504-507)",
    "MageFlow": _YET + "MageFlowTransformer2DModel (comfy/ldm/mage_flow/model.py:94, a QwenImage model_base) with reference latents; no host sync found by a scan",
    "PixelDiTT2I": _YET + "PixDiT_T2I (comfy/ldm/pixeldit/model.py:191), a pixel-space DiT, runs through the wrapper; no host sync found by a scan",
    "PiD": (
        _YET + "PidNet (comfy/ldm/pixeldit/pid.py:234) adds a low-quality latent and degrade_sigma to PixelDiT's forward; "
        "its LQ encoder takes the target size as Python ints (:146)"
    ),
    "HunyuanDiT": (
        _YET + "HunYuanDiT (comfy/ldm/hydit/models.py:143) writes padding into its context argument in place and "
        "copies a NumPy RoPE grid to the device each call (host copies a graph must stage); no host sync found"
    ),
    "HunyuanDiT1": _YET + "the HunyuanDiT 1.0 layout of HunYuanDiT (comfy/ldm/hydit/models.py:143), as HunyuanDiT",
}
