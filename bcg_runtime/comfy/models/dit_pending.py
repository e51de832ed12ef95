"""Diffusion transformers of ComfyUI 0.33.0 that BCG does not serve, each with what its forward
shows (read in 0.33.0, comfy/ldm/...). This module defines no ``ADAPTER`` and no ``RECIPE``: it is
no family; BCG Apply leaves these models unchanged and shows the reason. ``refused`` marks a class
whose forward BCG cannot serve as it is (every class listed now); a class that only lacks an
adapter, a recipe and its tests would be marked ``not supported yet``.

Never reach BCG's hook: BCG serves a DiT call from ComfyUI's ``WrappersMP.DIFFUSION_MODEL``
wrapper, which a model's ``forward`` must run through (``WrapperExecutor``). PixArt
(``pixart/pixartms.py:219``), Mochi (``genmo/joint_model/asymm_models_joint.py:487``) and Boogu
(``boogu/model.py:255``) call their ``_forward`` body directly, and HunyuanDiT's ``HunYuanDiT.forward``
(``hydit/models.py:274``, both HunyuanDiT classes) is the forward itself with no ``WrapperExecutor``,
so BCG Apply would install a wrapper their calls never enter. (HunyuanDiT's forward would also
need its in-place padding writes into ``context`` (:324-325) and its NumPy RoPE grid, copied to the
device each call (``calc_rope`` :14-22), looked at; moot while no call reaches the hook.)
"""

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
}
