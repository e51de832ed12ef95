"""Diffusion transformers of ComfyUI 0.33.0 that BCG does not serve yet (no adapter, recipe or
tests), each with what its forward shows (read in 0.33.0, comfy/ldm/...). This module defines no
``ADAPTER`` and no ``RECIPE``: it is no family; BCG Apply leaves these models unchanged and shows
the reason. ``refused`` marks a class whose forward BCG cannot serve as it is; ``not supported
yet`` one that needs an adapter, a recipe and its tests (CPU stand-in and H200).

Never reach BCG's hook: BCG serves a DiT call from ComfyUI's ``WrappersMP.DIFFUSION_MODEL``
wrapper, which a model's ``forward`` must run through (``WrapperExecutor``). PixArt
(``pixart/pixartms.py:219``), Mochi (``genmo/joint_model/asymm_models_joint.py:487``) and Boogu
(``boogu/model.py:255``) call their ``_forward`` body directly, and HunyuanDiT's ``HunYuanDiT.forward``
(``hydit/models.py:274``, both HunyuanDiT classes) is the forward itself with no ``WrapperExecutor``,
so BCG Apply would install a wrapper their calls never enter. (HunyuanDiT's forward would also
need its in-place padding writes into ``context`` (:324-325) and its NumPy RoPE grid, copied to the
device each call (``calc_rope`` :14-22), looked at; moot while no call reaches the hook.)
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
    "CosmosT2V": (
        _YET + "GeneralDIT (comfy/ldm/cosmos/model.py:423); its RoPE compares fps.min() with fps.max() on the host "
        "for a tensor fps (comfy/ldm/cosmos/position_embedding.py:137), the sync the Cosmos-Predict2 adapter refuses"
    ),
    "CosmosI2V": (
        _YET + "GeneralDIT (comfy/ldm/cosmos/model.py:423); its RoPE compares fps.min() with fps.max() on the host "
        "for a tensor fps (comfy/ldm/cosmos/position_embedding.py:137), the sync the Cosmos-Predict2 adapter refuses"
    ),
    "FluxInpaint": (
        _YET + "the FLUX.1 forward with the masked image and its mask as 96 input channels "
        "(comfy/supported_models.py:771); the FLUX.1 adapter does not list the class until a recipe and tests prove it"
    ),
    "HunyuanVideo": _YET + "HunyuanVideo 1.0 (comfy/supported_models.py:988, comfy/ldm/hunyuan_video/model.py), another layout than the supported HunyuanVideo 1.5",
    "HunyuanVideoI2V": _YET + "HunyuanVideo 1.0 image-to-video, the image latent as channels of x (in_channels 33, comfy/supported_models.py:1038)",
    "HunyuanVideoSkyreelsI2V": _YET + "HunyuanVideo 1.0 SkyReels image-to-video (in_channels 32, comfy/supported_models.py:1048)",
    "CosmosI2VPredict2": (
        _YET + "Cosmos-Predict2 with the conditioning frames as input channels (in_channels 17, "
        "comfy/supported_models.py:1163); the Cosmos-Predict2 adapter lists only CosmosT2IPredict2"
    ),
    "Anima": _YET + "comfy/supported_models.py:1131 (comfy/ldm/anima/model.py), its own text adapter in front of a Cosmos-Predict2-style DiT",
    "HunyuanDiT": (
        "refused: HunYuanDiT.forward (comfy/ldm/hydit/models.py:274) is the forward itself, with no "
        "WrapperExecutor: it does not run through ComfyUI's DIFFUSION_MODEL wrapper, BCG's hook; it also "
        "writes padding into its context argument in place (:324-325) and builds its RoPE grid in NumPy "
        "each call (calc_rope :14-22, posemb_layers.py:53)"
    ),
    "HunyuanDiT1": (
        "refused: the HunyuanDiT 1.0 layout of HunYuanDiT, whose forward (comfy/ldm/hydit/models.py:274) "
        "does not run through ComfyUI's DIFFUSION_MODEL wrapper, BCG's hook (as HunyuanDiT)"
    ),
    "HunyuanVideo15_SR_Distilled": (
        _YET + "the HunyuanVideo 1.5 forward with a 98-channel concat; model_base sends disable_time_r=False "
        "(comfy/model_base.py:2720), so a meanflow (time_r_in) checkpoint takes the torch.where over sample_sigmas "
        "(comfy/ldm/hunyuan_video/model.py:315-321) that the HunyuanVideo 1.5 adapter refuses"
    ),
    "HunyuanImage21Refiner": (
        _YET + "the HunyuanVideo forward with a 3-D patch [1,1,1] and no vector input (comfy/supported_models.py:2071); "
        "the start image is channels of x and disable_time_r=True (comfy/model_base.py:2629), so no host sync is expected"
    ),
}
