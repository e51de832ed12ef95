"""What the e2e tests share: a ComfyUI base directory with synthetic models, the test workflows,
a real ComfyUI server process started from ``$COMFYUI_PATH`` (on CUDA when the test process sees
a GPU, else ``--cpu``), and the HTTP/websocket helpers the tests use to drive it.

Nothing is downloaded. The base directory holds:

- ``custom_nodes/ComfyUI-BCG``: a link to this checkout (a copy where links are not allowed);
- ``models/diffusion_models/``: a random-weight Z-Image checkpoint with :data:`DEPTH` main blocks
  (``$BCG_E2E_DEPTH``, default 1; widths are fixed by ComfyUI's detection), from
  ``bench.synthetic.build_state_dict`` (ComfyUI detects it as Z-Image);
- ``models/vae_approx/taef1_{encoder,decoder}.safetensors``: a random-weight TAESD for 16-channel
  latents, which ComfyUI's own VAELoader offers as "taef1";
- a training dataset named :func:`cond_folder(n) <cond_folder>` for every length n of
  :data:`COND_LENGTHS`: conditioning of n tokens shaped like Z-Image's text encoder output
  (``synthetic.make_conditioning``), written by ComfyUI's own SaveTrainingDataset node (see
  :func:`save_training_dataset`), so that ComfyUI's LoadTrainingDataset node feeds it to the
  workflow ("prompts" of different token lengths). Where that folder lies and what the loader
  accepts is the running ComfyUI's business: 0.8.0 keeps datasets in ``output/``, 0.33.0 in
  ``datasets/`` and lists only folders with a ``metadata.json``. No 4B-parameter text encoder is
  needed, and no node is added for testing.

The test workflow is ``scripts/bcg_api_example.json`` (the API twin of the template in
``example_workflows/``) with the CLIP loader and text encoder replaced by LoadTrainingDataset, the
VAE by "taef1", and a small size and step count.
:func:`latent_workflow` saves the sampler's latent with ComfyUI's SaveLatent instead of decoding,
and :func:`eager_twin` is the same prompt with the BCG nodes bypassed (the model goes straight from
ModelSamplingAuraFlow to the KSampler), which is what replayed results are compared with.

Sizes, depth and the soak plan are set here and nowhere else. The pieces themselves (the server
process, the base directory's files, the workflow edits, the websocket runner) live in
``bench/comfy_{server,base,workflow,ws}.py``, shared with the server benchmark (``bench.server``),
and are re-exported here under the names the tests use.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import comfy_base, comfy_workflow  # noqa: E402
from bench.comfy_base import PACK_DIR, comfy_folders, link_pack, save_training_dataset  # noqa: E402,F401
from bench.comfy_server import OPT_OUT_VAR, ComfyServer, alive, cuda_available, free_port, gpu_memory, post, rss_mib  # noqa: E402,F401
from bench.comfy_workflow import (  # noqa: E402,F401
    APPLY_ID, COND_ID, EXAMPLES, SAMPLER_ID, SAVE_ID, SAVE_LATENT_ID, WARMUP_ID, example, set_warmup,
)  # fmt: skip
from bench.comfy_ws import Run, run_prompt  # noqa: E402,F401

#: Main blocks of the synthetic Z-Image (its refiner blocks and widths are those of the real model).
DEPTH = int(os.environ.get("BCG_E2E_DEPTH", "1"))
#: The family of the e2e layer's model; :func:`make_base` can add others (the no-flags check does).
FAMILY = "zimage"


def unet_file(family: str = FAMILY) -> str:
    return f"bcg_e2e_{family}_depth{DEPTH}.safetensors"


UNET_FILE = unet_file()
COND_FOLDER = "bcg_e2e_conditioning"
COND_LENGTH = 24
STEPS = 2
SIZE = (64, 64)
# The soak plan (tests/e2e/test_soak.py): prompts of every (resolution, text length) below. The
# warm-up captures WARM resolutions x WARM lengths (its text_buckets; Z-Image keys on the exact
# caption length, so a bucket is exactly one length); a prompt replays every call exactly when
# both its resolution and its length were warmed, and otherwise runs every call eager with
# "not captured: WxH txtN b1".
SOAK_STEPS = 4
SOAK_WARM_RESOLUTIONS = ((256, 256), (512, 512))
SOAK_COLD_RESOLUTIONS = ((384, 256),)
SOAK_WARM_LENGTHS = (40, 77, 120)
SOAK_COLD_LENGTHS = (17,)
#: Every conditioning length make_base writes a folder for.
COND_LENGTHS = (COND_LENGTH,) + SOAK_WARM_LENGTHS + SOAK_COLD_LENGTHS
SERVER_MODULES = ("aiohttp", "alembic", "sqlalchemy", "comfyui_frontend_package", "av", "safetensors", "yaml")


def cond_folder(length: int, family: str = FAMILY) -> str:
    """The dataset holding ``family``'s conditioning of ``length`` tokens (see :func:`make_base`)."""
    name = COND_FOLDER if length == COND_LENGTH else f"bcg_e2e_cond_txt{length}"
    return name if family == FAMILY else f"{name}_{family}"


def family_cond_length(family: str) -> int:
    """The prompt length :func:`make_base` writes for a family other than :data:`FAMILY` (its
    recipe's, e.g. 256 for FLUX's padded T5)."""
    from bench import synthetic

    return COND_LENGTH if family == FAMILY else synthetic.family_info(family).prompt_lengths[0]


def call_label(size: tuple[int, int], length: int, batch: int = 1) -> str:
    """BCG's label of a Z-Image DiT call (``ModelAdapter.label``): ``WxH txtN bB``."""
    return f"{size[0]}x{size[1]} txt{length} b{batch}"


def skip_reason() -> str | None:
    """Why the e2e layer cannot run here, or None."""
    path = os.environ.get("COMFYUI_PATH")
    if not path:
        return "COMFYUI_PATH is unset and the pack is not in a ComfyUI/custom_nodes folder: point COMFYUI_PATH at a ComfyUI checkout to start a real server"
    if not (Path(path) / "main.py").is_file():
        return f"no main.py under COMFYUI_PATH={path}: point it at a ComfyUI checkout"
    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        return f"ComfyUI's server dependencies are missing ({', '.join(missing)}): pip install -r $COMFYUI_PATH/requirements.txt"
    return None


def load_client():
    """The headless client's HTTP helpers (``bcg_client.comfy_http``: queue, wait, http_json,
    bcg_status, download_images), which the e2e tests drive the server with."""
    from bcg_client import comfy_http

    return comfy_http


# ------------------------------------------------------------------------------ base directory
def make_base(base: Path, others: tuple[str, ...] = ()) -> Path:
    """Fill ``base`` (ComfyUI's --base-directory) with the pack, the models and the conditioning;
    ``others``: more families, each with its model and one conditioning dataset
    (:func:`family_cond_length` tokens), for :func:`latent_workflow`'s ``family``."""
    import torch

    comfy_base.import_comfyui(os.environ["COMFYUI_PATH"])
    from bench import synthetic

    link_pack(base / "custom_nodes")
    models = base / "models" / "diffusion_models"
    comfy_base.write_unet(FAMILY, models / UNET_FILE, depth=DEPTH)
    comfy_base.write_taesd(base, latent_channels=16)
    for length in COND_LENGTHS:
        latents = [{"samples": torch.zeros(1, 16, SIZE[1] // 8, SIZE[0] // 8)}]
        conditioning = [synthetic.make_conditioning(FAMILY, length, seed=1 if length == COND_LENGTH else length)]
        save_training_dataset(base, cond_folder(length), latents, conditioning)
    for family in others:
        comfy_base.write_unet(family, models / unet_file(family), depth=DEPTH)
        length = family_cond_length(family)
        latents = [{"samples": synthetic.empty_latent(family, *SIZE).cpu()}]
        conditioning = [synthetic.make_conditioning(family, length, seed=1)]
        save_training_dataset(base, cond_folder(length, family), latents, conditioning)

    # A first visit would open the template browser over the canvas.
    settings = base / "user" / "default" / "comfy.settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"Comfy.TutorialCompleted": True, "Comfy.Minimap.Visible": False}))
    return base


# ------------------------------------------------------------------------------------ workflow
def e2e_workflow(seed: int = 0, size: tuple[int, int] = SIZE, steps: int = STEPS) -> dict:
    """The API example, runnable on this server (``bench.comfy_workflow.api_workflow``)."""
    return comfy_workflow.api_workflow(UNET_FILE, COND_FOLDER, size, steps, seed)


def latent_workflow(
    seed: int,
    size: tuple[int, int] = SIZE,
    steps: int = STEPS,
    prefix: str = "bcg_e2e/latent",
    length: int | None = None,
    family: str = FAMILY,
) -> dict:
    """:func:`e2e_workflow` with ``family``'s model and conditioning of ``length`` tokens (default:
    :data:`COND_LENGTH`, or :func:`family_cond_length` for another family), saving the sampler's
    latent (``bench.comfy_workflow.latent_workflow``) instead of decoding and saving an image."""
    length = family_cond_length(family) if length is None else length
    return comfy_workflow.latent_workflow(unet_file(family), cond_folder(length, family), size, steps, seed, prefix)


def eager_twin(prompt: dict, prefix: str) -> dict:
    """``prompt`` with the BCG nodes bypassed (``bench.comfy_workflow.eager_twin``)."""
    return comfy_workflow.eager_twin(prompt, prefix)


def saved_latent(base: Path, entry: dict, node_id: str = SAVE_LATENT_ID):
    """The tensor SaveLatent wrote for a finished prompt (its ``/history`` entry)."""
    return comfy_workflow.saved_latent(base / "output", entry, node_id)


def session_by_id(sessions: list[dict], session_id: str) -> dict:
    """The session with ``session_id`` in a ``GET /bcg/status`` answer."""
    return next(s for s in sessions if s["id"] == session_id)


def status_messages(entry: dict, kind: str) -> list[dict]:
    """The ``kind`` messages ComfyUI recorded in a prompt's ``/history`` status."""
    return [data for name, data in (entry.get("status") or {}).get("messages", []) if name == kind]


def cached_nodes(entry: dict) -> set[str]:
    """Node ids whose outputs ComfyUI took from its cache for this prompt (not executed)."""
    [message] = status_messages(entry, "execution_cached")
    return set(message["nodes"])


def count_colour(image, colour: str) -> int:
    """Pixels of ``image`` within 5 of ``colour`` (``#rrggbb``) in every channel."""
    import numpy as np

    want = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(np.asarray(image.convert("RGB")).astype(int) - want) < 6).all(axis=-1).sum())


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
