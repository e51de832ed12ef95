"""The pack's example workflow made runnable on a server set up by :mod:`bench.comfy_base`, and
its variants: without the warm-up node, BCG Apply's mode and capture policy, the eager twin (BCG
bypassed), the sampler's latent saved instead of an image. Plain dict edits of the API format;
shared by the server benchmark and the e2e layer.

The workflow is ``scripts/bcg_api_example.json`` (the API twin of the template in
``example_workflows/``) with the CLIP loader and text encoder replaced by LoadTrainingDataset
(the conditioning :func:`bench.comfy_base.save_training_dataset` wrote), the VAE by "taef1".
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from .comfy_base import PACK_ROOT

#: The pack's template (UI format, listed by ComfyUI's template browser) and its API-format twin.
EXAMPLES = {
    "ui": PACK_ROOT / "example_workflows" / "Z-Image-Turbo text to image with BCG.json",
    "api": PACK_ROOT / "scripts" / "bcg_api_example.json",
}
#: Node ids of the example workflows (the UI and API examples use the same ids).
APPLY_ID, WARMUP_ID, SAVE_ID = "7", "8", "12"
SAMPLER_ID, COND_ID = "10", "4"
#: The SaveLatent node :func:`latent_workflow` adds.
SAVE_LATENT_ID = "13"


def example(kind: str) -> dict:
    return json.loads(EXAMPLES[kind].read_text())


def api_workflow(
    unet_name: str, cond_folder: str, size: tuple[int, int], steps: int, seed: int, capture: str = "warm-up only"
) -> dict:
    """The API example with ``unet_name``, the conditioning dataset ``cond_folder``, the "taef1"
    VAE, ``size`` (latent and warm-up resolution), ``steps``, ``seed`` and BCG Apply's ``capture``
    policy (default "warm-up only": the e2e plans count warmed vs unwarmed shapes)."""
    prompt = copy.deepcopy(example("api"))
    by_class = {node["class_type"]: node_id for node_id, node in prompt.items()}
    clip_loader, text = by_class.pop("CLIPLoader"), by_class["CLIPTextEncode"]
    del prompt[clip_loader]
    prompt[text] = {"class_type": "LoadTrainingDataset", "inputs": {"folder_name": cond_folder}}
    for node in prompt.values():  # LoadTrainingDataset's conditioning is its second output
        for name, value in node["inputs"].items():
            if isinstance(value, list) and value[0] == text:
                node["inputs"][name] = [text, 1]
    prompt[by_class["UNETLoader"]]["inputs"]["unet_name"] = unet_name
    prompt[by_class["VAELoader"]]["inputs"]["vae_name"] = "taef1"
    prompt[by_class["BCGWarmupCapture"]]["inputs"]["resolutions"] = f"{size[0]}x{size[1]}"
    prompt[by_class["BCGApply"]]["inputs"]["capture"] = capture
    latent = prompt[by_class["EmptySD3LatentImage"]]["inputs"]
    latent["width"], latent["height"] = size
    sampler = prompt[by_class["KSampler"]]["inputs"]
    sampler["seed"], sampler["steps"] = seed, steps
    return prompt


def latent_workflow(
    unet_name: str,
    cond_folder: str,
    size: tuple[int, int],
    steps: int,
    seed: int,
    prefix: str,
    capture: str = "warm-up only",
) -> dict:
    """:func:`api_workflow` saving the sampler's latent (SaveLatent, node :data:`SAVE_LATENT_ID`,
    files ``output/<prefix>_NNNNN_.latent``) instead of decoding and saving an image. The model
    goes through the example's sampling-shift node whatever the family; its eager twin does the
    same, so comparisons are unaffected."""
    prompt = api_workflow(unet_name, cond_folder, size, steps, seed, capture)
    decode = prompt[SAVE_ID]["inputs"]["images"][0]
    vae = prompt[decode]["inputs"]["vae"][0]
    for node_id in (SAVE_ID, decode, vae):
        del prompt[node_id]
    prompt[SAVE_LATENT_ID] = {
        "class_type": "SaveLatent",
        "inputs": {"samples": [SAMPLER_ID, 0], "filename_prefix": prefix},
    }
    return prompt


def set_warmup(
    prompt: dict, resolutions: str, text_buckets: str, batch_sizes: str = "1", positive: bool = True
) -> dict:
    """Set BCG Warmup Capture's plan in ``prompt`` (in place, returned); ``positive=False``
    disconnects the workflow's conditioning, so only ``text_buckets`` lengths are captured."""
    inputs = prompt[WARMUP_ID]["inputs"]
    inputs.update(resolutions=resolutions, text_buckets=text_buckets, batch_sizes=batch_sizes)
    if not positive:
        inputs.pop("positive", None)
        inputs.pop("negative", None)
    return prompt


def set_apply(prompt: dict, mode: str | None = None, capture: str | None = None) -> dict:
    """Set BCG Apply's ``mode`` and ``capture`` policy in ``prompt`` (in place, returned)."""
    inputs = prompt[APPLY_ID]["inputs"]
    if mode is not None:
        inputs["mode"] = mode
    if capture is not None:
        inputs["capture"] = capture
    return prompt


def set_sampler(prompt: dict, seed: int | None = None, steps: int | None = None, cfg: float | None = None) -> dict:
    """Set the KSampler's ``seed``, ``steps`` and ``cfg`` in ``prompt`` (in place, returned)."""
    inputs = prompt[SAMPLER_ID]["inputs"]
    for name, value in (("seed", seed), ("steps", steps), ("cfg", cfg)):
        if value is not None:
            inputs[name] = value
    return prompt


def set_prefix(prompt: dict, prefix: str) -> dict:
    """Save the latent under ``prefix`` (in place, returned)."""
    prompt[SAVE_LATENT_ID]["inputs"]["filename_prefix"] = prefix
    return prompt


def _bypass(prompt: dict, node_ids: tuple[str, ...]) -> dict:
    """``prompt`` with ``node_ids`` (model -> model nodes) removed, as ComfyUI's frontend exports a
    bypassed node: their model consumers wired to the first one's model input."""
    out = copy.deepcopy(prompt)
    source = out[node_ids[0]]["inputs"]["model"]
    for node_id in node_ids:
        del out[node_id]
    for node in out.values():
        for name, value in node["inputs"].items():
            if isinstance(value, list) and value[0] in node_ids:
                if value[1] != 0:
                    raise ValueError(
                        f"{node['class_type']}.{name} uses an output other than the model of a bypassed node"
                    )
                node["inputs"][name] = list(source)
    return out


def without_warmup(prompt: dict) -> dict:
    """``prompt`` with BCG Warmup Capture bypassed: BCG Apply alone before the KSampler."""
    return _bypass(prompt, (WARMUP_ID,))


def eager_twin(prompt: dict, prefix: str) -> dict:
    """``prompt`` with the BCG nodes bypassed: BCG Apply and BCG Warmup Capture (where present)
    removed, their model consumers wired to BCG Apply's input. Everything else (seed,
    conditioning, size, sampler) is unchanged; the latent is saved under ``prefix``."""
    twin = _bypass(prompt, tuple(i for i in (APPLY_ID, WARMUP_ID) if i in prompt))
    return set_prefix(twin, prefix)


def saved_latent(output_dir: Path, entry: dict, node_id: str = SAVE_LATENT_ID):
    """The tensor SaveLatent wrote for a finished prompt (its ``/history`` entry) under the
    server's ``output_dir``."""
    from safetensors.torch import load_file

    [item] = entry["outputs"][node_id]["latents"]
    return load_file(str(Path(output_dir) / item["subfolder"] / item["filename"]))["latent_tensor"]
