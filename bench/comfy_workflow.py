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
from dataclasses import dataclass
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
SHIFT_ID, LATENT_ID = "6", "9"
#: The SaveLatent node :func:`latent_workflow` adds; for a joint audio-video family also Separate
#: AV Latent (the sampler's latent is a NestedTensor, which SaveLatent cannot write) and the audio
#: stream's SaveLatent.
SAVE_LATENT_ID, SEPARATE_ID, AUDIO_SAVE_ID = "13", "14", "15"


@dataclass(frozen=True)
class VideoNodes:
    """What a video family's users put where the example (a Z-Image text-to-image) has its
    sampling-shift node and its empty image latent: ``shift`` (class, inputs besides the model),
    ``latent`` (class; it takes width, height and ``length`` in pixel frames), the size its users
    meet (``WIDTHxHEIGHTxFRAMES``), whether the latent node takes a ``batch_size``, and whether
    the latent holds an audio stream beside the video."""

    shift: tuple[str, dict]
    latent: str
    default_size: str
    batch_input: bool = True
    joint_audio: bool = False


#: Video families the server workflow knows, with the nodes of ComfyUI's own workflows for them:
#: MiniMax H3's joint video+audio latent and its two flow shifts (a plain shift node would drop
#: the audio schedule) at its latent node's default size (about 5 s of video), Wan's 16-channel
#: video latent with the SD3-style shift of its examples, 33 frames at 480p.
VIDEO_NODES = {
    "minimax_h3": VideoNodes(
        ("MiniMaxH3SigmaShift", {"shift_video": 12.0, "shift_audio": 3.0}),
        "EmptyMiniMaxH3LatentAV",
        "1344x768x124",
        batch_input=False,
        joint_audio=True,
    ),
    "wan": VideoNodes(("ModelSamplingSD3", {"shift": 8.0}), "EmptyHunyuanLatentVideo", "832x480x33"),
}


def example(kind: str) -> dict:
    return json.loads(EXAMPLES[kind].read_text())


def api_workflow(
    unet_name: str,
    cond_folder: str,
    size: tuple,
    steps: int,
    seed: int,
    capture: str = "warm-up only",
    family: str | None = None,
) -> dict:
    """The API example with ``unet_name``, the conditioning dataset ``cond_folder``, the "taef1"
    VAE, ``size`` (latent and warm-up resolution: ``(width, height)``, or ``(width, height,
    frames)`` for a video ``family`` of :data:`VIDEO_NODES`, whose shift and empty-latent nodes
    replace the example's), ``steps``, ``seed`` and BCG Apply's ``capture`` policy (default
    "warm-up only": the e2e plans count warmed vs unwarmed shapes)."""
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
    prompt[by_class["BCGWarmupCapture"]]["inputs"]["resolutions"] = "x".join(map(str, size))
    prompt[by_class["BCGApply"]]["inputs"]["capture"] = capture
    latent = prompt[by_class["EmptySD3LatentImage"]]["inputs"]
    latent["width"], latent["height"] = size[:2]
    sampler = prompt[by_class["KSampler"]]["inputs"]
    sampler["seed"], sampler["steps"] = seed, steps
    if family in VIDEO_NODES:
        return with_video_nodes(prompt, family, size)
    if len(size) != 2:
        raise ValueError(
            f"{family or 'an image model'} makes images: its size is WIDTHxHEIGHT, not {'x'.join(map(str, size))}"
        )
    return prompt


def with_gguf_loader(prompt: dict) -> dict:
    """``prompt`` (in place, returned) with its UNETLoader replaced by ComfyUI-GGUF's UnetLoaderGGUF
    of the same file name (a ``.gguf`` file in ``diffusion_models``)."""
    for node in prompt.values():
        if node["class_type"] == "UNETLoader":
            node["class_type"], node["inputs"] = "UnetLoaderGGUF", {"unet_name": node["inputs"]["unet_name"]}
    return prompt


def with_video_nodes(prompt: dict, family: str, size: tuple) -> dict:
    """``prompt`` (the API example, in place, returned) with ``family``'s shift and empty-latent
    nodes (:data:`VIDEO_NODES`) for a video of ``size`` = (width, height, frames)."""
    if len(size) != 3:
        raise ValueError(f"{family} makes video: its size is WIDTHxHEIGHTxFRAMES, not {'x'.join(map(str, size))}")
    nodes = VIDEO_NODES[family]
    shift_class, shift_inputs = nodes.shift
    prompt[SHIFT_ID] = {
        "class_type": shift_class,
        "inputs": {**shift_inputs, "model": prompt[SHIFT_ID]["inputs"]["model"]},
    }
    width, height, frames = size
    inputs = {"width": width, "height": height, "length": frames}
    if nodes.batch_input:
        inputs["batch_size"] = prompt[LATENT_ID]["inputs"]["batch_size"]
    prompt[LATENT_ID] = {"class_type": nodes.latent, "inputs": inputs}
    return prompt


def latent_workflow(
    unet_name: str,
    cond_folder: str,
    size: tuple,
    steps: int,
    seed: int,
    prefix: str,
    capture: str = "warm-up only",
    family: str | None = None,
) -> dict:
    """:func:`api_workflow` saving the sampler's latent (SaveLatent, node :data:`SAVE_LATENT_ID`,
    files ``output/<prefix>_NNNNN_.latent``) instead of decoding and saving an image. An image
    model goes through the example's sampling-shift node whatever its family (its eager twin does
    the same, so comparisons are unaffected); a video family of :data:`VIDEO_NODES` through its own."""
    prompt = api_workflow(unet_name, cond_folder, size, steps, seed, capture, family)
    decode = prompt[SAVE_ID]["inputs"]["images"][0]
    vae = prompt[decode]["inputs"]["vae"][0]
    for node_id in (SAVE_ID, decode, vae):
        del prompt[node_id]
    prompt[SAVE_LATENT_ID] = {
        "class_type": "SaveLatent",
        "inputs": {"samples": [SAMPLER_ID, 0], "filename_prefix": prefix},
    }
    if family in VIDEO_NODES and VIDEO_NODES[family].joint_audio:
        prompt[SEPARATE_ID] = {"class_type": "LTXVSeparateAVLatent", "inputs": {"av_latent": [SAMPLER_ID, 0]}}
        prompt[SAVE_LATENT_ID]["inputs"]["samples"] = [SEPARATE_ID, 0]
        prompt[AUDIO_SAVE_ID] = {
            "class_type": "SaveLatent",
            "inputs": {"samples": [SEPARATE_ID, 1], "filename_prefix": f"{prefix}_audio"},
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
    """Save the latent under ``prefix`` (an audio stream under ``<prefix>_audio``; in place, returned)."""
    prompt[SAVE_LATENT_ID]["inputs"]["filename_prefix"] = prefix
    if AUDIO_SAVE_ID in prompt:
        prompt[AUDIO_SAVE_ID]["inputs"]["filename_prefix"] = f"{prefix}_audio"
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


def saved_streams(output_dir: Path, entry: dict):
    """The sampler's latent as the workflow saved it: SaveLatent's tensor, or where a joint
    audio-video family's streams were saved apart, both flattened into one tensor (video, then
    audio), so one comparison covers both."""
    if AUDIO_SAVE_ID not in entry["outputs"]:
        return saved_latent(output_dir, entry)
    import torch

    return torch.cat([saved_latent(output_dir, entry, i).flatten() for i in (SAVE_LATENT_ID, AUDIO_SAVE_ID)])
