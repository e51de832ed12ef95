"""What a real ComfyUI server needs on disk to run the pack's workflows with no download: the pack
in its ``custom_nodes``, a synthetic checkpoint in ``models/diffusion_models``, a random TAESD in
``models/vae_approx`` and conditioning saved as a training dataset by ComfyUI's own
SaveTrainingDataset node (read back in the workflow by LoadTrainingDataset, so no text encoder is
needed). Shared by the server benchmark (:mod:`bench.server`) and the e2e layer
(``tests/e2e/e2e_setup.py``).

ComfyUI is imported in this process (the dataset node, the TAESD classes, the checkpoint builder):
call :func:`import_comfyui` first.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from pathlib import Path

#: This checkout: what is linked into the server's custom_nodes.
PACK_ROOT = Path(__file__).resolve().parents[1]
PACK_DIR = "ComfyUI-BCG"
#: Weight formats of a server checkpoint file (:func:`write_unet`): bf16, or the blocks' Linear
#: layers in per-tensor scaled float8_e4m3fn with ComfyUI's ``comfy_quant`` metadata (the format
#: the in-process benchmark calls ``--weight-dtype comfy_quant_fp8``; the fp8 "scaled" releases
#: load into the same mixed-precision model), or a GGUF file of :data:`GGUF_TYPES` that
#: ComfyUI-GGUF's UnetLoaderGGUF loads (the pack linked in from ``$BCG_PACKS_PATH``: :func:`link_third_party`).
WEIGHT_FORMATS = ("bf16", "fp8_scaled", "gguf_q8_0", "gguf_q4_k")
#: GGUF weight format -> its ``GGMLQuantizationType`` name (``bench.gguf_file``).
GGUF_TYPES = {"gguf_q8_0": "Q8_0", "gguf_q4_k": "Q4_K"}
#: The third-party pack a weight format needs in the server's custom_nodes.
GGUF_PACK = "ComfyUI-GGUF"
#: Top-level entries of a ComfyUI tree that :func:`stock_copy` leaves out (user data, outputs, the
#: user's other model folders).
USER_FOLDERS = ("models", "custom_nodes", "output", "input", "temp", "user", ".git", "extra_model_paths.yaml")


def import_comfyui(path: str | os.PathLike, cpu: bool | None = None) -> None:
    """Put the ComfyUI at ``path`` on ``sys.path``, with ``--cpu`` set for this process when
    ``cpu`` (default: where it sees no CUDA, as ``comfy.model_management`` would look for a GPU on
    import)."""
    import torch

    path = os.path.abspath(path)
    if path not in sys.path:
        sys.path.insert(0, path)
    import comfy.cli_args

    if cpu or (cpu is None and not torch.cuda.is_available()):
        comfy.cli_args.args.cpu = True


def stock_copy(src: str | os.PathLike, dst: Path) -> Path:
    """Copy the ComfyUI tree ``src`` to ``dst`` as a stock install: its code and the empty model
    folders, no models, no other custom nodes, no user data and no extra model paths
    (:data:`USER_FOLDERS`); so a server run in ``dst`` with no flags uses ``dst``'s folders only
    and sees nothing of ``src``'s user."""
    src = Path(src).resolve()

    def ignore(folder: str, names: list[str]) -> set[str]:  # the user folders at the top only
        top = Path(folder).resolve() == src
        return {n for n in names if n == "__pycache__" or (top and n in USER_FOLDERS)}

    shutil.copytree(src, dst, symlinks=True, ignore=ignore)
    for folder in (src / "models").iterdir() if (src / "models").is_dir() else ():
        if folder.is_dir():
            (dst / "models" / folder.name).mkdir(parents=True, exist_ok=True)
    (dst / "custom_nodes").mkdir(exist_ok=True)
    return dst


def link_pack(custom_nodes: Path) -> Path:
    """This checkout as ``custom_nodes/ComfyUI-BCG`` (a link; a copy where links are not allowed)."""
    target = custom_nodes / PACK_DIR
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        target.symlink_to(PACK_ROOT, target_is_directory=True)
    except OSError:  # no symlinks here: copy what ComfyUI loads
        shutil.copytree(PACK_ROOT, target, ignore=shutil.ignore_patterns(".*", "__pycache__", "tests", "bench_out"))
    return target


def server_tree(src: str | os.PathLike, dst: Path, gguf: bool) -> Path:
    """A stock copy of ``src`` at ``dst`` (:func:`stock_copy`) with this pack linked into its
    ``custom_nodes``, and ComfyUI-GGUF beside it where ``gguf`` (a model in a GGUF format)."""
    stock_copy(src, dst)
    link_pack(dst / "custom_nodes")
    if gguf:
        link_third_party(dst / "custom_nodes", GGUF_PACK)
    return dst


def unet_file(stem: str, weights: str) -> str:
    """The model file's name for ``weights``: ``.gguf`` for a GGUF format, else ``.safetensors``."""
    return f"{stem}.gguf" if weights in GGUF_TYPES else f"{stem}.safetensors"


def link_third_party(custom_nodes: Path, name: str) -> Path:
    """The third-party pack ``name`` from ``$BCG_PACKS_PATH`` (``bench.packs``) linked into a
    server's ``custom_nodes``, so that ComfyUI's own loader imports it at start."""
    from . import packs

    source = packs.pack_dir(name)
    if source is None:
        raise SystemExit(f"{name} not found under {packs.packs_path()}: set BCG_PACKS_PATH (docs/testing.md)")
    target = custom_nodes / name
    if not target.exists():
        target.symlink_to(source.resolve(), target_is_directory=True)
    return target


def write_unet(family: str, path: Path, depth=None, weights: str = "bf16", device=None) -> Path:
    """The synthetic ``family`` checkpoint (``bench.synthetic``, the family's real key layout) as
    the safetensors file UNETLoader reads, in ``weights`` (:data:`WEIGHT_FORMATS`); generated on
    ``device`` (the GPU makes full-size models fast), written from CPU memory."""
    from safetensors.torch import save_file

    from . import synthetic

    if weights not in WEIGHT_FORMATS:
        raise ValueError(f"weights {weights!r}: one of {', '.join(WEIGHT_FORMATS)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    sd = synthetic.build_state_dict(family, depth=depth, device=device)
    if weights in GGUF_TYPES:
        from . import gguf_file

        gguf_file.write({key: sd.pop(key).cpu() for key in list(sd)}, str(path), family, GGUF_TYPES[weights])
        return path
    cpu = {}
    if weights == "fp8_scaled":
        # One layer at a time, each off the device as it is made: the device never holds the model
        # in both formats (MiniMax H3's 62 GiB in bf16 fits an 80 GB GPU once, not twice).
        for layer, fmt in synthetic.quantized_layers(family, depth, "float8_e4m3fn").items():
            one = synthetic.comfy_quant_checkpoint({f"{layer}.weight": sd.pop(f"{layer}.weight")}, {layer: fmt})
            cpu.update((key, t.contiguous().cpu()) for key, t in one.items())
    for key in list(sd):  # one tensor at a time off the device
        cpu[key] = sd.pop(key).contiguous().cpu()
    save_file(cpu, str(path), metadata=synthetic.family_info(family).metadata(depth))
    return path


def save_training_dataset(base: Path, folder_name: str, latents: list[dict], conditioning: list) -> Path:
    """Save ``latents`` and ``conditioning`` (lists of one entry per sample) as the dataset
    ``folder_name`` of a server whose ComfyUI folders lie in ``base`` (its ``--base-directory``, or
    its own tree), and return its folder.

    ComfyUI's own SaveTrainingDataset node writes it, run in this process while ComfyUI's folders
    point into ``base`` as ``--base-directory`` would point them (:func:`comfy_folders`); so the
    location, the shard format and ``metadata.json`` are those of the ComfyUI under test, whatever
    its version (0.8.0 saves under ``output/``, 0.33.0 under ``datasets/``). Then its
    LoadTrainingDataset is asked the same way, and anything the server would reject fails here
    with the reason: a ``folder_name`` its input does not offer (0.33.0 makes it a list of the
    dataset folders it finds), or a shard it cannot load (0.33.0 loads with ``weights_only``).
    """
    import torch
    from comfy_extras import nodes_dataset

    # Shards new or rewritten by this save (a second model of the same family and prompt length
    # saves the same dataset again over its own shards).
    before = {p: p.stat().st_mtime_ns for p in base.rglob("shard_*.pkl")}
    with comfy_folders(base):
        nodes_dataset.SaveTrainingDataset.execute(
            latents=latents, conditioning=conditioning, folder_name=[folder_name], shard_size=[1000]
        )
        [field] = [i for i in nodes_dataset.LoadTrainingDataset.define_schema().inputs if i.id == "folder_name"]
        offered = getattr(field, "options", None)
        if offered is not None and folder_name not in offered:
            raise RuntimeError(
                f"LoadTrainingDataset does not offer the dataset it was saved as: {folder_name!r} not in {offered}"
            )
        loaded = nodes_dataset.LoadTrainingDataset.execute(folder_name=folder_name).result
    folders = sorted({p.parent for p in base.rglob("shard_*.pkl") if before.get(p) != p.stat().st_mtime_ns})
    if len(folders) != 1:
        raise RuntimeError(
            f"SaveTrainingDataset {folder_name!r}: expected one new folder of shards under {base}, got {folders}"
        )
    if len(loaded[1]) != len(conditioning) or not all(
        torch.equal(got[0][0], want[0][0]) for got, want in zip(loaded[1], conditioning)
    ):
        raise RuntimeError(f"LoadTrainingDataset read other conditioning back from {folders[0]}")
    return folders[0]


@contextlib.contextmanager
def comfy_folders(base: Path):
    """Point this process's ComfyUI folders (``folder_paths``: every registered folder below
    ComfyUI's base path, and the output, input, temp and user directories) into ``base``, as
    ``main.py --base-directory base`` points the server's; restored on exit."""
    import folder_paths as fp

    root = os.path.abspath(fp.base_path)
    saved = {name: (list(paths), exts) for name, (paths, exts) in fp.folder_names_and_paths.items()}
    dirs = {name: getattr(fp, f"get_{name}_directory")() for name in ("output", "input", "temp", "user")}

    def moved(path: str) -> str:
        path = os.path.abspath(path)
        return (
            os.path.join(str(base), os.path.relpath(path, root))
            if path == root or path.startswith(root + os.sep)
            else path
        )

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


def taesd_state_dicts(latent_channels: int, seed: int = 0) -> dict[str, dict]:
    """Random weights in ComfyUI's TAESD layout (its layers are created uninitialised)."""
    import comfy.taesd.taesd as taesd
    import torch

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


def write_taesd(base: Path, latent_channels: int = 16) -> None:
    """A random TAESD for ``latent_channels``-channel latents as ``models/vae_approx/taef1_*``,
    which ComfyUI's VAELoader offers as "taef1"."""
    from safetensors.torch import save_file

    vae = base / "models" / "vae_approx"
    vae.mkdir(parents=True, exist_ok=True)
    for part, tensors in taesd_state_dicts(latent_channels).items():
        save_file(tensors, str(vae / f"taef1_{part}.safetensors"))
