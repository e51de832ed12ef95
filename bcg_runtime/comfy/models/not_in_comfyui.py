"""Models of the pack's origin, SGLang's diffusion BCG, that ComfyUI has no model class for: the
support table names them with why they are not served (nothing to hook until ComfyUI loads them;
an adapter follows a class). No ``ADAPTER`` here: this module is no family."""

#: Model -> why BCG does not serve it (one line each).
NOT_IN_COMFYUI = {
    "GLM-Image": "no ComfyUI model class (none in 0.33.0's comfy/supported_models.py, nor in any newer file read)",
}
