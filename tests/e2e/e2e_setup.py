"""What the e2e tests share: a ComfyUI base directory with synthetic models, the test workflow,
and a real ComfyUI server process started from ``$COMFYUI_PATH``.

Nothing is downloaded. The base directory holds:

- ``custom_nodes/ComfyUI-BCG``: a link to this checkout (a copy where links are not allowed);
- ``models/diffusion_models/``: a random-weight Z-Image checkpoint with one main block, from
  ``bcg_runtime.comfy.synthetic.build_state_dict`` (ComfyUI detects it as Z-Image);
- ``models/vae_approx/taef1_{encoder,decoder}.safetensors``: a random-weight TAESD for 16-channel
  latents, which ComfyUI's own VAELoader offers as "taef1";
- ``output/bcg_e2e_conditioning/shard_0000.pkl``: conditioning shaped like Z-Image's text encoder
  output (``synthetic.make_conditioning``), stored in the format of ComfyUI's SaveTrainingDataset,
  so that ComfyUI's LoadTrainingDataset node feeds it to the workflow. No 4B-parameter text
  encoder is needed, and no node is added for testing.

The test workflow is ``example_workflows/bcg_api_example.json`` with the CLIP loader and text
encoder replaced by LoadTrainingDataset, the VAE by "taef1", and a small size and step count.
"""

from __future__ import annotations

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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_workflows"
PACK_DIR = "ComfyUI-BCG"
UNET_FILE = "bcg_e2e_zimage_depth1.safetensors"
COND_FOLDER = "bcg_e2e_conditioning"
COND_LENGTH = 24
STEPS = 2
SIZE = (64, 64)
#: Node ids of the example workflows (the UI and API examples use the same ids).
APPLY_ID, WARMUP_ID, SAVE_ID = "7", "8", "12"
SERVER_MODULES = ("aiohttp", "alembic", "sqlalchemy", "comfyui_frontend_package", "av", "safetensors", "yaml")


def skip_reason() -> str | None:
    """Why the e2e layer cannot run here, or None."""
    path = os.environ.get("COMFYUI_PATH")
    if not path:
        return "COMFYUI_PATH is unset: point it at a ComfyUI checkout to start a real server"
    if not (Path(path) / "main.py").is_file():
        return f"no main.py under COMFYUI_PATH={path}: point it at a ComfyUI checkout"
    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        return f"ComfyUI's server dependencies are missing ({', '.join(missing)}): pip install -r $COMFYUI_PATH/requirements.txt"
    return None


def load_client():
    """``scripts/bcg_client.py`` as a module (the tests use its HTTP helpers)."""
    spec = importlib.util.spec_from_file_location("bcg_client", ROOT / "scripts" / "bcg_client.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bcg_client"] = module
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------------------ base directory
def make_base(base: Path) -> Path:
    """Fill ``base`` (ComfyUI's --base-directory) with the pack, the models and the conditioning."""
    import torch
    from safetensors.torch import save_file

    comfy_path = os.path.abspath(os.environ["COMFYUI_PATH"])
    if comfy_path not in sys.path:
        sys.path.insert(0, comfy_path)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import comfy.cli_args

    if not torch.cuda.is_available():  # comfy.model_management would look for a GPU on import
        comfy.cli_args.args.cpu = True
    from bcg_runtime.comfy import synthetic

    _link_pack(base / "custom_nodes" / PACK_DIR)

    unet = base / "models" / "diffusion_models" / UNET_FILE
    unet.parent.mkdir(parents=True, exist_ok=True)
    sd = synthetic.build_state_dict("zimage", depth=1)
    save_file({k: v.contiguous() for k, v in sd.items()}, str(unet))
    del sd

    vae = base / "models" / "vae_approx"
    vae.mkdir(parents=True, exist_ok=True)
    for part, tensors in _taesd_state_dicts(latent_channels=16).items():
        save_file(tensors, str(vae / f"taef1_{part}.safetensors"))

    cond = base / "output" / COND_FOLDER
    cond.mkdir(parents=True, exist_ok=True)
    shard = {
        "latents": [{"samples": torch.zeros(1, 16, SIZE[1] // 8, SIZE[0] // 8)}],
        "conditioning": [synthetic.make_conditioning("zimage", COND_LENGTH, seed=1)],
    }
    torch.save(shard, cond / "shard_0000.pkl")

    # A first visit would open the template browser over the canvas.
    settings = base / "user" / "default" / "comfy.settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"Comfy.TutorialCompleted": True, "Comfy.Minimap.Visible": False}))
    return base


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
    return json.loads((EXAMPLES / f"bcg_{kind}_example.json").read_text())


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
    latent = prompt[by_class["EmptySD3LatentImage"]]["inputs"]
    latent["width"], latent["height"] = size
    sampler = prompt[by_class["KSampler"]]["inputs"]
    sampler["seed"], sampler["steps"] = seed, steps
    return prompt


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


# -------------------------------------------------------------------------------------- server
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ComfyServer:
    """``python main.py --cpu ...`` from $COMFYUI_PATH on a free port, logging to ``base/server.log``."""

    def __init__(self, base: Path):
        self.base = base
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = base / "server.log"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 240) -> "ComfyServer":
        cmd = [
            sys.executable, "main.py", "--cpu", "--listen", "127.0.0.1", "--port", str(self.port),
            "--base-directory", str(self.base), "--database-url", "sqlite:///:memory:",
        ]  # fmt: skip
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, cwd=os.environ["COMFYUI_PATH"], stdout=log, stderr=subprocess.STDOUT, env=env)
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
                    raise RuntimeError(f"ComfyUI is up but GET /bcg/status is 404: the pack's route did not register\n{self.log_tail()}")
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

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"
