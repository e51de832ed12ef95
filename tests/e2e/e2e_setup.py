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

Sizes, depth and the soak plan are set here and nowhere else.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bcg_runtime.allocator_env import OPT_OUT_VAR  # noqa: E402  (standard library only)

#: The pack's template (UI format, listed by ComfyUI's template browser) and its API-format twin.
EXAMPLES = {
    "ui": ROOT / "example_workflows" / "Z-Image-Turbo text to image with BCG.json",
    "api": ROOT / "scripts" / "bcg_api_example.json",
}
PACK_DIR = "ComfyUI-BCG"
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
#: Node ids of the example workflows (the UI and API examples use the same ids).
APPLY_ID, WARMUP_ID, SAVE_ID = "7", "8", "12"
SAMPLER_ID, COND_ID = "10", "4"
#: The SaveLatent node :func:`latent_workflow` adds.
SAVE_LATENT_ID = "13"

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


def cuda_available() -> bool:
    """Whether this (the test) process sees a CUDA GPU; the server then runs on it."""
    import torch

    return torch.cuda.is_available()


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
    from safetensors.torch import save_file

    comfy_path = os.path.abspath(os.environ["COMFYUI_PATH"])
    if comfy_path not in sys.path:
        sys.path.insert(0, comfy_path)
    import comfy.cli_args

    if not torch.cuda.is_available():  # comfy.model_management would look for a GPU on import
        comfy.cli_args.args.cpu = True
    from bench import synthetic

    _link_pack(base / "custom_nodes" / PACK_DIR)

    unet = base / "models" / "diffusion_models" / UNET_FILE
    unet.parent.mkdir(parents=True, exist_ok=True)
    sd = synthetic.build_state_dict(FAMILY, depth=DEPTH)
    save_file({k: v.contiguous() for k, v in sd.items()}, str(unet))
    del sd

    vae = base / "models" / "vae_approx"
    vae.mkdir(parents=True, exist_ok=True)
    for part, tensors in _taesd_state_dicts(latent_channels=16).items():
        save_file(tensors, str(vae / f"taef1_{part}.safetensors"))

    for length in COND_LENGTHS:
        latents = [{"samples": torch.zeros(1, 16, SIZE[1] // 8, SIZE[0] // 8)}]
        conditioning = [synthetic.make_conditioning(FAMILY, length, seed=1 if length == COND_LENGTH else length)]
        save_training_dataset(base, cond_folder(length), latents, conditioning)
    for family in others:
        sd = synthetic.build_state_dict(family, depth=DEPTH)
        save_file({k: v.contiguous() for k, v in sd.items()}, str(unet.parent / unet_file(family)))
        del sd
        length = family_cond_length(family)
        latents = [{"samples": synthetic.empty_latent(family, *SIZE).cpu()}]
        conditioning = [synthetic.make_conditioning(family, length, seed=1)]
        save_training_dataset(base, cond_folder(length, family), latents, conditioning)

    # A first visit would open the template browser over the canvas.
    settings = base / "user" / "default" / "comfy.settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"Comfy.TutorialCompleted": True, "Comfy.Minimap.Visible": False}))
    return base


def save_training_dataset(base: Path, folder_name: str, latents: list[dict], conditioning: list) -> Path:
    """Save ``latents`` and ``conditioning`` (lists of one entry per sample) as the dataset
    ``folder_name`` of a server whose ``--base-directory`` is ``base``, and return its folder.

    ComfyUI's own SaveTrainingDataset node writes it, run in this process while ComfyUI's folders
    point into ``base`` as ``--base-directory`` would point them (:func:`_comfy_folders`); so the
    location, the shard format and ``metadata.json`` are those of the ComfyUI under test, whatever
    its version (0.8.0 saves under ``output/``, 0.33.0 under ``datasets/``). Then its
    LoadTrainingDataset is asked the same way, and anything the server would reject fails here
    with the reason: a ``folder_name`` its input does not offer (0.33.0 makes it a list of the
    dataset folders it finds), or a shard it cannot load (0.33.0 loads with ``weights_only``).
    """
    import torch
    from comfy_extras import nodes_dataset

    before = set(base.rglob("shard_*.pkl"))
    with _comfy_folders(base):
        nodes_dataset.SaveTrainingDataset.execute(latents=latents, conditioning=conditioning, folder_name=[folder_name], shard_size=[1000])
        [field] = [i for i in nodes_dataset.LoadTrainingDataset.define_schema().inputs if i.id == "folder_name"]
        offered = getattr(field, "options", None)
        if offered is not None and folder_name not in offered:
            raise RuntimeError(f"LoadTrainingDataset does not offer the dataset it was saved as: {folder_name!r} not in {offered}")
        loaded = nodes_dataset.LoadTrainingDataset.execute(folder_name=folder_name).result
    folders = sorted({p.parent for p in set(base.rglob("shard_*.pkl")) - before})
    assert len(folders) == 1, f"SaveTrainingDataset {folder_name!r}: expected one new folder of shards under {base}, got {folders}"
    assert len(loaded[1]) == len(conditioning) and all(
        torch.equal(got[0][0], want[0][0]) for got, want in zip(loaded[1], conditioning)
    ), f"LoadTrainingDataset read other conditioning back from {folders[0]}"
    return folders[0]


@contextlib.contextmanager
def _comfy_folders(base: Path):
    """Point this process's ComfyUI folders (``folder_paths``: every registered folder below
    ComfyUI's base path, and the output, input, temp and user directories) into ``base``, as
    ``main.py --base-directory base`` points the server's; restored on exit."""
    import folder_paths as fp

    root = os.path.abspath(fp.base_path)
    saved = {name: (list(paths), exts) for name, (paths, exts) in fp.folder_names_and_paths.items()}
    dirs = {name: getattr(fp, f"get_{name}_directory")() for name in ("output", "input", "temp", "user")}

    def moved(path: str) -> str:
        path = os.path.abspath(path)
        return os.path.join(str(base), os.path.relpath(path, root)) if path == root or path.startswith(root + os.sep) else path

    try:
        for name, (paths, exts) in saved.items():
            fp.folder_names_and_paths[name] = ([moved(p) for p in paths], exts)
        for name, path in dirs.items():
            getattr(fp, f"set_{name}_directory")(moved(path))
        yield
    finally:
        fp.folder_names_and_paths.update(saved)
        for name, path in dirs.items():
            getattr(fp, f"set_{name}_directory")(path)


def _link_pack(target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        target.symlink_to(ROOT, target_is_directory=True)
    except OSError:  # no symlinks here: copy what ComfyUI loads
        shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(".*", "__pycache__", "tests", "bench_out"))


def _taesd_state_dicts(latent_channels: int, seed: int = 0) -> dict[str, dict]:
    """Random weights in ComfyUI's TAESD layout (its layers are created uninitialised)."""
    import torch
    import comfy.taesd.taesd as taesd

    gen = torch.Generator().manual_seed(seed)
    out = {}
    for part, make in (("encoder", taesd.Encoder), ("decoder", taesd.Decoder)):
        with torch.device("meta"):
            shapes = {k: v.shape for k, v in make(latent_channels=latent_channels).state_dict().items()}
        tensors = {}
        for key, shape in shapes.items():
            fan_in = max(1, int(torch.Size(shape[1:]).numel()))
            tensors[key] = torch.randn(shape, generator=gen) * (0.0 if len(shape) == 1 else (1.0 / fan_in) ** 0.5)
        out[part] = tensors
    return out


# ------------------------------------------------------------------------------------ workflow
def example(kind: str) -> dict:
    return json.loads(EXAMPLES[kind].read_text())


def e2e_workflow(seed: int = 0, size: tuple[int, int] = SIZE, steps: int = STEPS) -> dict:
    """The API example, runnable on this server (see the module docstring)."""
    prompt = copy.deepcopy(example("api"))
    by_class = {node["class_type"]: node_id for node_id, node in prompt.items()}
    clip_loader, text = by_class.pop("CLIPLoader"), by_class["CLIPTextEncode"]
    del prompt[clip_loader]
    prompt[text] = {"class_type": "LoadTrainingDataset", "inputs": {"folder_name": COND_FOLDER}}
    for node in prompt.values():  # LoadTrainingDataset's conditioning is its second output
        for name, value in node["inputs"].items():
            if isinstance(value, list) and value[0] == text:
                node["inputs"][name] = [text, 1]
    prompt[by_class["UNETLoader"]]["inputs"]["unet_name"] = UNET_FILE
    prompt[by_class["VAELoader"]]["inputs"]["vae_name"] = "taef1"
    prompt[by_class["BCGWarmupCapture"]]["inputs"]["resolutions"] = f"{size[0]}x{size[1]}"
    # The e2e plans (soak, client) count warmed vs unwarmed shapes: warm-up semantics. Capture on
    # first call is covered by the comfy layer (tests/comfy/test_zero_config.py).
    prompt[by_class["BCGApply"]]["inputs"]["capture"] = "warm-up only"
    latent = prompt[by_class["EmptySD3LatentImage"]]["inputs"]
    latent["width"], latent["height"] = size
    sampler = prompt[by_class["KSampler"]]["inputs"]
    sampler["seed"], sampler["steps"] = seed, steps
    return prompt


def latent_workflow(
    seed: int, size: tuple[int, int] = SIZE, steps: int = STEPS, prefix: str = "bcg_e2e/latent", length: int | None = None,
    family: str = FAMILY,
) -> dict:
    """:func:`e2e_workflow` with ``family``'s model and conditioning of ``length`` tokens (default:
    :data:`COND_LENGTH`, or :func:`family_cond_length` for another family), saving the sampler's
    latent (SaveLatent, node :data:`SAVE_LATENT_ID`, files ``output/<prefix>_NNNNN_.latent``)
    instead of decoding and saving an image. The model goes through the example's sampling-shift
    node like Z-Image's; the eager twin does the same, so the comparison is unaffected."""
    length = family_cond_length(family) if length is None else length
    prompt = e2e_workflow(seed, size, steps)
    loader = next(i for i, node in prompt.items() if node["class_type"] == "UNETLoader")
    prompt[loader]["inputs"]["unet_name"] = unet_file(family)
    decode = prompt[SAVE_ID]["inputs"]["images"][0]
    vae = prompt[decode]["inputs"]["vae"][0]
    for node_id in (SAVE_ID, decode, vae):
        del prompt[node_id]
    prompt[COND_ID]["inputs"]["folder_name"] = cond_folder(length, family)
    prompt[SAVE_LATENT_ID] = {"class_type": "SaveLatent", "inputs": {"samples": [SAMPLER_ID, 0], "filename_prefix": prefix}}
    return prompt


def set_warmup(prompt: dict, resolutions: str, text_buckets: str, batch_sizes: str = "1", positive: bool = True) -> dict:
    """Set BCG Warmup Capture's plan in ``prompt`` (in place, returned); ``positive=False``
    disconnects the workflow's conditioning, so only ``text_buckets`` lengths are captured."""
    inputs = prompt[WARMUP_ID]["inputs"]
    inputs.update(resolutions=resolutions, text_buckets=text_buckets, batch_sizes=batch_sizes)
    if not positive:
        inputs.pop("positive", None)
        inputs.pop("negative", None)
    return prompt


def eager_twin(prompt: dict, prefix: str) -> dict:
    """``prompt`` with the BCG nodes bypassed, as ComfyUI's frontend exports a bypassed node: BCG
    Apply and BCG Warmup Capture removed, their model consumers wired to BCG Apply's input.
    Everything else (seed, conditioning, size, sampler) is unchanged; the latent is saved under
    ``prefix``."""
    twin = copy.deepcopy(prompt)
    source = twin[APPLY_ID]["inputs"]["model"]
    del twin[APPLY_ID], twin[WARMUP_ID]
    for node in twin.values():
        for name, value in node["inputs"].items():
            if isinstance(value, list) and value[0] in (APPLY_ID, WARMUP_ID):
                assert value[1] == 0, f"{node['class_type']}.{name} uses a BCG output other than the model"
                node["inputs"][name] = list(source)
    twin[SAVE_LATENT_ID]["inputs"]["filename_prefix"] = prefix
    return twin


def saved_latent(base: Path, entry: dict, node_id: str = SAVE_LATENT_ID):
    """The tensor SaveLatent wrote for a finished prompt (its ``/history`` entry)."""
    from safetensors.torch import load_file

    [item] = entry["outputs"][node_id]["latents"]
    path = base / "output" / item["subfolder"] / item["filename"]
    return load_file(str(path))["latent_tensor"]


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


# -------------------------------------------------------------------------------------- server
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(server: str, path: str, payload: dict, timeout: float = 30) -> int:
    """POST a JSON body to a route that answers with an empty body (``/free``, ``/interrupt``)."""
    request = urllib.request.Request(server.rstrip("/") + path, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status


class ComfyServer:
    """``python main.py ...`` from $COMFYUI_PATH on a free port, logging to ``base/<name>.log``.

    Started as users start ComfyUI: on a GPU with no device flag at all (the pack's prestartup
    script switches ComfyUI's default cudaMallocAsync allocator to PyTorch's native one, see
    ``bcg_runtime/allocator_env.py``), with ``--cpu`` only where there is no CUDA. The server
    inherits this process's environment less :data:`OPT_OUT_VAR`, so a tester's opt-out never
    reaches it unasked; ``env`` adds (or, with value None, removes) variables on top, e.g.
    ``{OPT_OUT_VAR: "1"}`` for a server that keeps cudaMallocAsync.

    ``bare=True``: ``python main.py`` and nothing else (``--cpu`` only without CUDA), run in ``base``,
    which must then be a ComfyUI tree: ComfyUI's own default port 8188, folders and database, as a
    user starts it (``scripts/noflags_check.py``). ``log_path`` overrides where the log goes.
    """

    def __init__(
        self, base: Path, cuda: bool | None = None, env: dict[str, str | None] | None = None, name: str = "server",
        bare: bool = False, log_path: Path | None = None,
    ):  # fmt: skip
        self.base = base
        self.cuda = cuda_available() if cuda is None else cuda
        self.env = dict(env or {})
        self.bare = bare
        self.port = 8188 if bare else free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path or base / f"{name}.log"
        self.proc: subprocess.Popen | None = None

    def device_args(self) -> list[str]:
        return [] if self.cuda else ["--cpu"]

    def environment(self) -> dict[str, str]:
        """The server's environment (see the class docstring)."""
        env = {k: v for k, v in os.environ.items() if k != OPT_OUT_VAR}
        env["PYTHONUNBUFFERED"] = "1"
        for name, value in self.env.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        return env

    def start(self, timeout: float = 240) -> "ComfyServer":
        cmd = [sys.executable, "main.py", *self.device_args()]
        if not self.bare:
            cmd += [
                "--listen", "127.0.0.1", "--port", str(self.port), "--base-directory", str(self.base),
                "--database-url", "sqlite:///:memory:",
            ]  # fmt: skip
        cwd = self.base if self.bare else os.environ["COMFYUI_PATH"]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, env=self.environment())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ComfyUI exited with {self.proc.returncode} while starting:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url + "/bcg/status", timeout=5) as response:
                    if response.status == 200:
                        return self
            except urllib.error.HTTPError as e:
                if e.code == 404:
                    raise RuntimeError(f"ComfyUI is up but GET /bcg/status is 404: the pack's route did not register\n{self.log_tail()}") from None
            except OSError:
                pass
            time.sleep(1)
        raise RuntimeError(f"ComfyUI did not answer within {timeout:.0f}s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def log_lines(self) -> list[str]:
        """The server log so far, one string per line ([] before it exists)."""
        try:
            return self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return []

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"


def alive(server: ComfyServer) -> bool:
    return server.proc is not None and server.proc.poll() is None


def gpu_memory(server: ComfyServer) -> dict:
    """The server's device memory from ``GET /system_stats`` (``devices[0]``), in bytes:
    ``reserved`` (PyTorch's reserved memory, ``torch_vram_total``), ``allocated`` (reserved minus
    PyTorch's free cached memory ``torch_vram_free``) and ``vram_free`` (what ComfyUI counts free)."""
    [device] = load_client().http_json(server.url, "/system_stats")["devices"][:1]
    reserved = int(device["torch_vram_total"])
    return {"reserved": reserved, "allocated": reserved - int(device["torch_vram_free"]), "vram_free": int(device["vram_free"])}


# ------------------------------------------------------------------------------- running prompts
@dataclass
class Run:
    """What the websocket said about one prompt, from queueing it to its end."""

    prompt_id: str
    #: Every ``bcg.status`` payload (the warm-up's, then the sampling run's).
    events: list[dict] = field(default_factory=list)
    #: ``value`` of each ``progress`` message of the KSampler (one per finished sampler step).
    progress: list[int] = field(default_factory=list)
    #: The ``execution_interrupted`` payload when the prompt was interrupted.
    interrupted: dict | None = None
    seconds: float = 0.0

    @property
    def last_run(self) -> dict:
        """``last_run`` of the last bcg.status event: the sampling run's report."""
        assert self.events, "no bcg.status websocket message arrived"
        return self.events[-1]["last_run"]


def run_prompt(server: ComfyServer, prompt: dict, interrupt_after: int | None = None, timeout: float = 600) -> Run:
    """Queue ``prompt`` with a websocket open and wait until it ended; an execution error fails.

    With ``interrupt_after``, ``POST /interrupt`` (for this prompt id) is sent once a progress
    message of the KSampler (node :data:`SAMPLER_ID`) reports that many finished steps.
    """
    return asyncio.run(_run(server, prompt, interrupt_after, timeout))


async def _run(server: ComfyServer, prompt: dict, interrupt_after: int | None, timeout: float) -> Run:
    import aiohttp

    client = load_client()
    client_id = uuid.uuid4().hex
    start = time.perf_counter()
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(f"{server.url.replace('http', 'ws', 1)}/ws?clientId={client_id}") as ws:
            run = Run(await asyncio.to_thread(client.queue, server.url, prompt, client_id))

            async def listen():
                interrupt_sent = False
                async for msg in ws:
                    if msg.type != aiohttp.WSMsgType.TEXT:
                        continue  # binary previews
                    message = json.loads(msg.data)
                    kind, data = message["type"], message.get("data") or {}
                    mine = data.get("prompt_id") == run.prompt_id
                    if kind == "bcg.status":
                        run.events.append(data)
                    elif kind == "progress" and mine and str(data.get("node")) == SAMPLER_ID:
                        run.progress.append(int(data["value"]))
                        if interrupt_after is not None and not interrupt_sent and data["value"] >= interrupt_after:
                            interrupt_sent = True
                            await asyncio.to_thread(post, server.url, "/interrupt", {"prompt_id": run.prompt_id})
                    elif kind == "execution_interrupted" and mine:
                        run.interrupted = data
                    elif kind == "execution_error" and mine:
                        raise AssertionError(f"prompt failed in node {data.get('node_type')}: {data.get('exception_message')}")
                    elif kind == "executing" and data.get("node") is None and mine:
                        return

            await asyncio.wait_for(listen(), timeout)
    run.seconds = time.perf_counter() - start
    return run
