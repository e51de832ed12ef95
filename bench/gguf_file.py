"""GGUF files of a synthetic checkpoint, in the layout city96's ComfyUI-GGUF loads (tests and benchmarks).

:func:`write` stores a ComfyUI diffusion-model state dict (``bench.synthetic.build_state_dict``)
as a ``.gguf`` file the way ComfyUI-GGUF's own converter (``tools/convert.py``) lays one out:
``general.architecture`` names the family, tensors keep ComfyUI's key names, one-dimensional and
small tensors and plain parameters stay F32, and every other tensor takes the requested quantization type.

Quantizers: the ``gguf`` package's own where it has one (Q4_0, Q5_0, Q4_1, Q5_1, BF16, F16), and
for Q8_0 the same arithmetic in torch (:func:`q8_0`, byte-equal to the package's, fast on a GPU).
For the K-quants (Q4_K, Q5_K, Q6_K), which the package dequantizes but cannot quantize, each
block is random bytes with its fp16 super-block scales set to a small finite value: the weights
are random anyway, and what a test needs is a file GGUF's dequantizer reads as it reads a real
one (the same block layout, the same kernels in the forward).
"""

from __future__ import annotations

import os
from typing import Mapping

import numpy as np
import torch

#: ComfyUI-GGUF's architecture name (``loader.IMG_ARCH_LIST``) per synthetic family.
ARCH = {"flux": "flux", "qwen_image": "qwen_image", "zimage": "lumina2", "wan": "wan"}
#: Tensors at or below this many elements stay F32, as in ComfyUI-GGUF's converter.
SMALL = 1024
#: Key parts of tensors a model reads as plain parameters, not through a Linear layer GGUF
#: dequantizes: kept F32, as the converter's ``keys_hiprec`` keeps Wan's ``.modulation`` and
#: LTX-Video's ``scale_shift_table`` (and as Z-Image files keep Lumina 2's pad tokens).
PLAIN_PARAMETERS = (".modulation", "scale_shift_table", "pad_token", "pos_embedder")
#: Byte offsets of the fp16 super-block scales inside one block of each K-quant (ggml's block
#: layouts), and the scale that gives the random blocks weights of about the synthetic std (0.02):
#: a weight is scale x sub-scale (up to 63, or +-127 for Q6_K) x quant (up to 15, 31 or +-32).
_K_SCALES = {"Q4_K": ((0, 2), 2e-5), "Q5_K": ((0, 2), 1e-5), "Q6_K": ((208,), 4e-6)}


def quant_type(name: str):
    import gguf

    return getattr(gguf.GGMLQuantizationType, name)


def _k_quant_blocks(rows: np.ndarray, name: str, seed: int) -> np.ndarray:
    """Random blocks of K-quant ``name`` for a float array whose last axis is a multiple of 256."""
    import gguf

    block, size = gguf.GGML_QUANT_SIZES[quant_type(name)]
    n_blocks = rows.size // block
    data = np.random.default_rng(seed).integers(0, 256, size=(n_blocks, size), dtype=np.uint8)
    offsets, value = _K_SCALES[name]
    scale = np.frombuffer(np.float16(value).tobytes(), dtype=np.uint8)
    for offset in offsets:
        data[:, offset : offset + 2] = scale
    return data.reshape(*rows.shape[:-1], rows.shape[-1] // block * size)


def q8_0(tensor: torch.Tensor) -> np.ndarray:
    """``gguf.quants.quantize(x, Q8_0)`` computed with torch where ``tensor`` lives (a GPU makes a
    12B checkpoint's quantization take seconds, not the minutes numpy needs): per block of 32, the
    fp16 scale ``max|x| / 127`` and the int8 quants ``x / scale`` rounded half away from zero, as
    the package computes them (``tests/unit/test_gguf_file.py`` checks byte equality)."""
    x = tensor.detach().to(torch.float32)
    blocks = x.reshape(-1, 32)
    d = blocks.abs().amax(dim=1, keepdim=True) / 127
    inverse = torch.where(d == 0, torch.zeros_like(d), 1 / d)
    scaled = blocks * inverse
    qs = (torch.sign(scaled) * torch.floor(scaled.abs() + 0.5)).to(torch.int8)
    packed = torch.cat([d.to(torch.float16).view(torch.int8), qs], dim=1)
    return packed.view(torch.uint8).reshape(*x.shape[:-1], x.shape[-1] // 32 * 34).cpu().numpy()


def _encode(key: str, tensor: torch.Tensor, name: str, seed: int):
    """``(array, qtype)`` of one tensor as the converter stores it."""
    import gguf

    if tensor.ndim <= 1 or tensor.numel() <= SMALL or any(part in key for part in PLAIN_PARAMETERS):
        return tensor.detach().to("cpu", torch.float32).numpy(), gguf.GGMLQuantizationType.F32
    if name == "Q8_0" and tensor.shape[-1] % 32 == 0:
        return q8_0(tensor), gguf.GGMLQuantizationType.Q8_0
    data = tensor.detach().to("cpu", torch.float32).numpy()
    if name in _K_SCALES:
        if data.shape[-1] % 256 == 0:
            return _k_quant_blocks(data, name, seed), quant_type(name)
        name = "F16"
    qtype = quant_type(name)
    try:
        return gguf.quants.quantize(data, qtype), qtype
    except (gguf.QuantError, NotImplementedError):  # a row length the type cannot hold: as the converter does
        return gguf.quants.quantize(data, gguf.GGMLQuantizationType.F16), gguf.GGMLQuantizationType.F16


def write(
    state_dict: Mapping[str, torch.Tensor],
    path: str,
    family: str,
    qtype: str,
    keep_f16: tuple[str, ...] = (),
) -> dict[str, str]:
    """Write ``state_dict`` to ``path`` with every large tensor as ``qtype`` (a
    ``GGMLQuantizationType`` name); keys ending in one of ``keep_f16`` are stored F16 (a layer a
    real file keeps unquantized). Returns each key's stored type name."""
    import gguf

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    writer = gguf.GGUFWriter(path=None, arch=ARCH[family])
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    stored = {}
    for index, (key, tensor) in enumerate(state_dict.items()):
        name = "F16" if key.endswith(keep_f16) else qtype
        data, stored_type = _encode(key, tensor, name, seed=index)
        writer.add_tensor(key, data, raw_dtype=stored_type)
        stored[key] = stored_type.name
    writer.write_header_to_file(path=path)
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return stored


def load(path: str):
    """The file at ``path`` through ComfyUI-GGUF's ``UnetLoaderGGUF`` (the pack imported by
    ComfyUI's custom-node loader: :mod:`bench.packs`): a ``GGUFModelPatcher`` whose weights are
    ``GGMLTensor`` views of the file."""
    import folder_paths

    from . import packs

    mappings = packs.load("ComfyUI-GGUF")
    folder_paths.add_model_folder_path("diffusion_models", os.path.dirname(os.path.abspath(path)))
    folder_paths.filename_list_cache.clear()
    (model,) = mappings["UnetLoaderGGUF"]().load_unet(os.path.basename(path))
    return model
