"""The benchmark's ComfyUI and model: ComfyUI put on ``sys.path`` before anything imports it, the
random-weight model in the requested weight format, each family's defaults."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from typing import Iterator

from bcg_runtime.comfy.models import by_family

from .recipes import RECIPES
from .synthetic import MIXED_NVFP4_FP8

log = logging.getLogger(__name__)

#: --weight-dtype -> ``synthetic.load_model`` keywords: UNETLoader's weight_dtype choices (the torch
#: dtype the loader stores weights in, cast in every forward), and ``comfy_quant_fp8``: a
#: mixed-precision checkpoint whose blocks' Linear layers are float8_e4m3fn with a scale, which
#: ComfyUI runs as fp8 matmuls (comfy-kitchen / ``torch._scaled_mm``) where the GPU computes fp8;
#: ``comfy_quant_nvfp4`` the same layers in nvfp4 (fp4 matmuls on Blackwell; other GPUs dequantize
#: them in every forward, which is what an nvfp4 release costs there); ``comfy_quant_mixed`` an
#: nvfp4/fp8 mixed release's layout (``synthetic.quantized_layers``).
WEIGHT_DTYPES = {
    "default": {},
    "fp8_e4m3fn": {"dtype": "float8_e4m3fn"},
    "fp8_e5m2": {"dtype": "float8_e5m2"},
    "comfy_quant_fp8": {"quant": "float8_e4m3fn"},
    "comfy_quant_nvfp4": {"quant": "nvfp4"},
    "comfy_quant_mixed": {"quant": MIXED_NVFP4_FP8},
    # A GGUF file (``bench.gguf_file``) loaded by city96's ComfyUI-GGUF (``$BCG_PACKS_PATH``): its
    # GGMLTensor weights dequantized in every forward.
    "gguf_q8_0": {"gguf": "Q8_0"},
    "gguf_q4_k": {"gguf": "Q4_K"},
    "gguf_q5_k": {"gguf": "Q5_K"},
    "gguf_q6_k": {"gguf": "Q6_K"},
}

#: family -> (steps, cfg): each family's recipe (``comfy/models/<family>.py``), as in shared/BASELINE.md.
DEFAULTS = {name: (recipe.default_steps, recipe.default_cfg) for name, recipe in RECIPES.items()}

CPU_NOTE = "no CUDA: eager only, on a reduced model at a small size; graph replay needs an NVIDIA GPU"
#: Prompt token counts (positive, negative) typed by default; the conditioning has the length the
#: family's text encoder gives them (:func:`default_prompt_lengths`).
TYPED_PROMPT_LENGTHS = (100, 12)


def default_prompt_lengths(family: str) -> tuple[int, int]:
    """(cond, uncond) context lengths of :data:`TYPED_PROMPT_LENGTHS` as the family's encoder
    delivers them (``ModelAdapter.text_length_seen``: FLUX.1's T5 pads both to 256)."""
    adapter = by_family(family)
    return tuple(adapter.text_length_seen(n) for n in TYPED_PROMPT_LENGTHS)


def setup_comfyui(path: str | None) -> str:
    """Put ComfyUI on sys.path (CPU mode where there is no CUDA) and return its version."""
    import torch

    if path is None:  # installed as ComfyUI/custom_nodes/<pack>
        guess = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
        path = guess if os.path.isdir(os.path.join(guess, "comfy")) else None
    if path is None or not os.path.isdir(os.path.join(path, "comfy")):
        raise SystemExit("ComfyUI not found: pass --comfyui /path/to/ComfyUI or set COMFYUI_PATH")
    sys.path.insert(0, os.path.abspath(path))
    import comfy.cli_args

    if not torch.cuda.is_available():
        comfy.cli_args.args.cpu = True
    comfy.cli_args.args.preview_method = comfy.cli_args.LatentPreviewMethod.NoPreviews
    import comfy.model_management  # noqa: F401  (reads the args above)

    try:
        from comfyui_version import __version__
    except ImportError:
        __version__ = "unknown"
    return __version__


@contextlib.contextmanager
def phase(what: str) -> Iterator[None]:
    """Log the start and the duration of a long phase (model build, warm-up, compile)."""
    log.info("[BCG] %s ...", what)
    start = time.perf_counter()
    yield
    log.info("[BCG] %s: %.1f s", what, time.perf_counter() - start)


def load_bench_model(family: str, depth, weight_dtype: str, device):
    """The synthetic ``family`` model in the ``--weight-dtype`` format (:data:`WEIGHT_DTYPES`)."""
    import torch

    from . import synthetic

    fmt = WEIGHT_DTYPES[weight_dtype]
    if "gguf" in fmt:
        return _load_gguf(family, depth, fmt["gguf"], device)
    options = {"dtype": getattr(torch, fmt["dtype"])} if "dtype" in fmt else None
    return synthetic.load_model(
        family, depth=depth, seed=0, device=device, model_options=options, quant=fmt.get("quant")
    )


def _load_gguf(family: str, depth, qtype: str, device):
    """The synthetic ``family`` written as a ``qtype`` GGUF file under ``$BCG_GGUF_DIR`` (default
    the system's temporary folder; made once per family, depth and type) and loaded by ComfyUI-GGUF."""
    import os
    import tempfile

    from . import gguf_file, synthetic

    folder = os.environ.get("BCG_GGUF_DIR", os.path.join(tempfile.gettempdir(), "bcg_gguf"))
    path = os.path.join(folder, f"{family}_d{depth or 'full'}_{qtype}.gguf")
    if not os.path.isfile(path):
        with phase(f"writing {os.path.basename(path)}"):
            sd = synthetic.build_state_dict(family, depth=depth, seed=0, device=device)
            gguf_file.write(sd, path + ".part", family, qtype)
            del sd
            os.replace(path + ".part", path)
    return gguf_file.load(path)


def comfy_kitchen_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("comfy-kitchen")
    except Exception:
        return None
