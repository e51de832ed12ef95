"""``comfy.supported_models`` classes of ComfyUI 0.33.0 outside BCG's scope: BCG replays diffusion
*transformers* of image and video models. These are UNets, audio or 3-D generators, or vision
models that are not diffusion models at all. BCG Apply leaves them unchanged ("unsupported model
<class>"). No ``ADAPTER``/``RECIPE`` here: this module is no family.
"""

_UNET = "UNet (comfy/ldm/modules/diffusionmodules/openaimodel.py), not a diffusion transformer"

#: ``comfy.supported_models`` class -> what it is (one line each).
OUT_OF_SCOPE = {
    **dict.fromkeys(
        (
            "SD15",
            "SD20",
            "SD21UnclipL",
            "SD21UnclipH",
            "SDXLRefiner",
            "SDXL",
            "SSD1B",
            "Segmind_Vega",
            "KOALA_700M",
            "KOALA_1B",
            "SVD_img2vid",
            "SV3D_u",
            "SV3D_p",
            "Stable_Zero123",
            "SD_X4Upscaler",
            "SD15_instructpix2pix",
            "SDXL_instructpix2pix",
            "LotusD",
        ),
        _UNET,
    ),
    "Stable_Cascade_C": "Stable Cascade stage C (comfy/ldm/cascade/stage_c.py), a convolutional UNet-style network",
    "Stable_Cascade_B": "Stable Cascade stage B (comfy/ldm/cascade/stage_b.py), a convolutional UNet-style network",
    "StableAudio": "audio model (Stable Audio's DiT over audio latents, comfy/ldm/audio/dit.py)",
    "StableAudio3": "audio model (Stable Audio 3, comfy/ldm/audio/dit.py)",
    "ACEStep": "audio model (ACE-Step music generator, comfy/ldm/ace/)",
    "ACEStep15": "audio model (ACE-Step 1.5 music generator, comfy/ldm/ace/ace_step15.py)",
    "MiniMaxMusic3": "audio model (MiniMax Music 3, comfy/ldm/minimax_music/)",
    "Hunyuan3Dv2": "3-D shape model (Hunyuan3D 2.0 latent DiT, comfy/ldm/hunyuan3d/)",
    "Hunyuan3Dv2_1": "3-D shape model (Hunyuan3D 2.1, comfy/ldm/hunyuan3dv2_1/)",
    "Hunyuan3Dv2mini": "3-D shape model (Hunyuan3D 2.0 mini)",
    "TripoSplat": "3-D model (TripoSplat Gaussian splats)",
    "Trellis2": "3-D model (TRELLIS.2 sparse structured latents, comfy/ldm/trellis2/)",
    "RT_DETR_v4": "object detector (RT-DETR v4), not a diffusion model",
    "DepthAnything3": "depth estimator (Depth Anything 3), not a diffusion model",
    "SAM3": "segmentation model (SAM 3), not a diffusion model",
    "SAM31": "segmentation model (SAM 3.1), not a diffusion model",
}
