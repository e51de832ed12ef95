"""bench.gguf_file's torch Q8_0 quantizer writes the bytes the gguf package's own quantizer writes."""

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.unit


def test_q8_0_equals_the_gguf_package():
    gguf = pytest.importorskip("gguf", reason="the gguf package (pip install gguf) is the reference")
    from bench.gguf_file import q8_0

    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 256, generator=g) * 0.02
    x[3, :32] = 0  # an all-zero block: scale 0, quants 0
    x[5, 7] = 0.5  # an outlier in a block
    x[7, :32] = torch.arange(32) / 254  # values at a rounding midpoint after scaling
    want = gguf.quants.quantize(x.numpy(), gguf.GGMLQuantizationType.Q8_0)
    assert np.array_equal(q8_0(x), want)
    back = gguf.quants.dequantize(q8_0(x), gguf.GGMLQuantizationType.Q8_0)
    assert np.abs(back - x.numpy()).max() < 0.01
