"""gpu layer, full-size models: BCG sampling equals eager sampling bit for bit on the H200.

Each family at its real width and depth (random bf16 weights in the real key layout), 512² and
1024², cfg 1 and cfg > 1 with cond and uncond of different prompt lengths where the family allows
(FLUX's T5 pads both to 256), both modes. Also: a second prompt replays with no new capture, an
unwarmed resolution falls back naming itself, and allocator churn between warm-up and sampling.
"""

import gc

import pytest
import torch
from bcg_testing import conds

from bcg_runtime.comfy import api, synthetic
from bcg_runtime.comfy.wrappers import session_of

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.comfy,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"),
]
STEPS = 3


@pytest.fixture(scope="module", params=["zimage", "flux", "qwen_image"])
def full_model(request):
    import comfy.model_management as mm

    model = synthetic.load_model(request.param, seed=0, device="cuda")
    yield request.param, model
    del model
    mm.unload_all_models()
    mm.cleanup_models_gc()
    gc.collect()
    torch.cuda.empty_cache()


@pytest.mark.parametrize("mode", ["breakable", "full"])
def test_full_size_sampling_is_bit_exact(full_model, mode):
    """Through bcg_runtime.comfy.api, the functions the nodes call (the GPU image has no PyAV, which
    ComfyUI's node API imports; the node shells are covered by the CPU comfy layer)."""
    family, model = full_model
    positive, negative = conds(family)
    warmed = api.apply(model, mode)
    report = api.warm_up(warmed, "512x512, 1024x1024", "", "1,2", positive, negative).text()
    print(report)
    session = session_of(warmed)
    assert "NOT exact" not in report and "new captures" in report, report
    captures = session.runner.stats.captures
    assert captures >= 2

    for res in (512, 1024):
        for cfg in (1.0, 2.5):
            eager = synthetic.sample(model, family, res, res, STEPS, cfg, positive, negative, seed=7)
            # churn the allocator between warm-up and replay: graphs must own what they read
            junk = [torch.empty(64 << 20, dtype=torch.uint8, device="cuda") for _ in range(4)]
            del junk[::2]
            out = synthetic.sample(warmed, family, res, res, STEPS, cfg, positive, negative, seed=7)
            run = session.last_run
            assert run["state"] == "replayed", (res, cfg, run)
            assert torch.equal(out, eager), (res, cfg, (out - eager).abs().max().item())

    # a second prompt (new seed) replays with no new capture
    synthetic.sample(warmed, family, 512, 512, STEPS, 2.5, positive, negative, seed=8)
    assert session.runner.stats.captures == captures and session.last_run["state"] == "replayed"

    # an unwarmed resolution falls back and says which
    synthetic.sample(warmed, family, 640, 512, 2, 1.0, positive, negative, seed=8)
    assert session.last_run["state"] == "off"
    assert any("640x512" in reason for reason in session.last_run["eager"]), session.last_run
