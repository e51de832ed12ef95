"""gpu layer, full-size models: BCG sampling equals eager sampling bit for bit on the H200.

Each family at its real width and depth (random bf16 weights in the real key layout), 512² and
1024², cfg 1 and cfg > 1 with cond and uncond of different prompt lengths where the family allows
(FLUX's T5 pads both to 256), both modes. Also: a second prompt replays with no new capture, an
unwarmed resolution falls back naming itself, and allocator churn between warm-up and sampling.
"""

import pytest
import torch
from bcg_testing import WARMUP_ONLY, conds, gpu_families, release_cuda_memory, skip_unless_host_builds

from bcg_runtime.comfy import api
from bench import not_exact, synthetic
from bcg_runtime.comfy.hooks import session_of

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.comfy,
    pytest.mark.skipif(
        not torch.cuda.is_available(), reason="needs a CUDA GPU (gpu layer): run scripts/gpu_suite.sh on the H200"
    ),
]
STEPS = 3


#: Families to sample (every recipe by default; ``BCG_GPU_FAMILIES="sd3 wan"`` picks some, to spend
#: GPU time on the ones a change touched; ``BCG_GPU_FAMILY_PART=k/n`` a lane's share).
FAMILIES = gpu_families()


@pytest.fixture(scope="module", params=FAMILIES)
def full_model(request):
    skip_unless_host_builds(request.param)
    if synthetic.family_info(request.param).adapter.keys_per_step:
        pytest.skip(
            f"{request.param}: a graph per sampling step replays from a schedule's second run, which this "
            "test's one-run replay checks do not cover; its own test file runs the real width on CUDA"
        )
    depth = synthetic.family_info(request.param).gpu_test_depth
    model = synthetic.load_model(request.param, depth=depth, seed=0, device="cuda")
    PROBES[request.param] = EagerProbe(model, request.param)
    yield request.param, model
    del PROBES[request.param]
    del model
    release_cuda_memory(unload=True)


class EagerProbe:
    """One recorded DiT call (the first of a 512² KSampler run at cfg 2.5) and its eager output and
    weight checksum when the model was loaded: :meth:`check` fails when the plain forward no longer
    gives those bits. BCG's captures, proofs and replays must leave eager as they found it (nothing
    escapes a capture), so the comparisons with eager below compare with what eager computed
    before BCG ran at all."""

    def __init__(self, model, family):
        self.dm, self.args, self.kwargs = not_exact.record_first_call(model, family, 512, 512, None, batch=2)
        self.output, self.weights = self.forward(), self.checksum()

    def forward(self):
        with torch.no_grad():
            return not_exact.plain_forward(self.dm)(*self.args, **self.kwargs)

    def checksum(self) -> float:
        with torch.no_grad():
            return sum(p.double().sum().item() for p in self.dm.parameters())

    def check(self, when: str) -> None:
        weights = self.checksum()
        assert weights == self.weights, f"{when}: the DiT's weights changed (checksum {self.weights!r} -> {weights!r})"
        drift = not_exact.outputs_diff(self.forward(), self.output)
        assert drift == 0.0, f"{when}: the eager forward no longer gives the bits it gave at load (max abs {drift})"


PROBES: dict[str, EagerProbe] = {}


@pytest.mark.parametrize("mode", ["breakable", "full"])
@torch.inference_mode()
def test_full_size_sampling_is_bit_exact(full_model, mode):
    """Through bcg_runtime.comfy.api, the functions the nodes call (the GPU image has no PyAV, which
    ComfyUI's node API imports; the node shells are covered by the CPU comfy layer). Under
    ``torch.inference_mode``, as ComfyUI's executor runs every prompt: tensors made there keep no
    version counter, so what the forward caches during sampling (an ``lru_cache`` table) is guarded
    by its bits, the way a server runs it."""
    family, model = full_model
    positive, negative = conds(family)
    PROBES[family].check("before the warm-up")
    warmed = api.apply(model, mode, capture=WARMUP_ONLY)
    report = api.warm_up(warmed, "512x512, 1024x1024", "", "1,2", positive, negative).text()
    print(report)
    session = session_of(warmed)
    PROBES[family].check("after the warm-up")
    assert "NOT exact" not in report and "new captures" in report, report
    captures = session.runner.stats.captures
    assert captures >= 2

    for res in (512, 1024):
        for cfg in (1.0, 2.5):
            eager = synthetic.sample(model, family, res, res, STEPS, cfg, positive, negative, seed=7)
            if (res, cfg) == (512, 2.5):  # bit-equal to eager means something only where eager repeats itself
                again = synthetic.sample(model, family, res, res, STEPS, cfg, positive, negative, seed=7)
                assert torch.equal(again, eager), (
                    f"{family}: eager sampling does not reproduce itself (max abs {(again - eager).abs().max().item():g}): "
                    "the comparison below could not judge BCG"
                )
            # graphs must own what they read: every free byte of the allocator now reads as NaN, so
            # a graph that reads memory it does not hold (freed since its capture) replays NaN
            not_exact.fill_free_memory(0xFF, torch.device("cuda"), gib=8)
            junk = [torch.empty(64 << 20, dtype=torch.uint8, device="cuda") for _ in range(4)]
            del junk[::2]  # and the allocator churned: what the graphs read has moved under them
            out = synthetic.sample(warmed, family, res, res, STEPS, cfg, positive, negative, seed=7)
            run = session.last_run
            assert run["state"] == "replayed", (res, cfg, run)
            assert torch.equal(out, eager), (
                f"{family} {res}² cfg {cfg}: replay differs from eager by {(out - eager).abs().max().item()}, "
                f"NaN in the replayed output: {out.isnan().any().item()} (NaN: a graph read freed memory)"
            )

    # a second prompt (new seed) replays with no new capture
    synthetic.sample(warmed, family, 512, 512, STEPS, 2.5, positive, negative, seed=8)
    assert session.runner.stats.captures == captures and session.last_run["state"] == "replayed"

    # an unwarmed resolution falls back and says which
    synthetic.sample(warmed, family, 640, 512, 2, 1.0, positive, negative, seed=8)
    assert session.last_run["state"] == "off"
    assert any("640x512" in reason for reason in session.last_run["eager"]), session.last_run
    PROBES[family].check("after the replays")


def test_flux_warmup_of_two_resolutions_and_three_buckets_is_quick_and_small(full_model):
    """The issue's warm-up figure: FLUX.1-dev, 512² and 1024² x three text lengths (T5 pads to
    256, so 256/384/512 are three distinct signatures), cond/uncond batched and apart. Memory is
    taken from the 512² half (the figure the issue asks for), time from the whole plan."""
    family, model = full_model
    if family != "flux":
        pytest.skip(f"the warm-up figure is FLUX.1-dev's ({family} is covered by the exactness test)")
    warmed = api.apply(model, "auto", capture=WARMUP_ONLY)
    small = api.warm_up(warmed, "512x512", "256,384,512", "1,2")
    large = api.warm_up(warmed, "1024x1024", "256,384,512", "1,2")
    print(small.text(), large.text(), sep="\n")
    seconds = small.seconds + large.seconds
    print(f"FLUX.1 warm-up 2 resolutions x 3 buckets x 2 batch sizes: {small.captured + large.captured} captures in "
          f"{seconds:.1f}s; at 512x512 peak +{small.peak_growth_mib:.0f} MiB, graphs {small.graph_mib:.0f} MiB")  # fmt: skip
    assert small.captured == 6 and large.captured == 6, (small.text(), large.text())
    assert all(r.exact for r in small.records + large.records)
    assert seconds < 30, f"warm-up took {seconds:.1f}s"
    assert small.peak_growth_mib < 3 * 1024, f"peak memory grew by {small.peak_growth_mib:.0f} MiB at 512x512"


def real_text_rows_only(real: int, padded: int):
    """An attention override for Qwen-Image's joint attention (text rows first, then image rows):
    attention over the ``real`` text rows and the image rows only, padded rows left as zeros.
    This is what a padded text bucket would run through the eager attention break."""

    def keep(t):
        return torch.cat([t[:, :, :real], t[:, :, padded:]], dim=2)

    def override(func, q, k, v, heads, *args, **kwargs):
        out = func(keep(q), keep(k), keep(v), heads, *args, **kwargs)
        full = out.new_zeros(out.shape[0], q.shape[2], out.shape[2])
        full[:, :real], full[:, padded:] = out[:, :real], out[:, real:]
        return full

    return override


def test_padded_text_rows_and_the_bits_of_real_rows(full_model):
    """Would padding text to a bucket be exact? Pad the context with random rows, keep them out of
    attention, and compare the DiT's output with the exact-length call bit for bit. Every other op
    is row-wise, so only kernel choice for a different row count can change the real rows. The
    measured answer is what the adapter declares (and what docs/models.md shows)."""
    import comfy.model_management as mm

    from bcg_runtime.comfy.models import by_family

    family, model = full_model
    adapter = by_family(family)
    if family != "qwen_image":
        pytest.skip(f"{adapter.display_name}: {adapter.text_policy}")
    mm.load_models_gpu([model])
    dit = model.model.diffusion_model
    dtype = next(dit.parameters()).dtype
    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(1, 16, 1, 64, 64, generator=gen, device="cuda", dtype=dtype)  # (b, c, t, h, w)
    timestep = torch.tensor([0.6], device="cuda")
    width = synthetic.family_info(family).text_dim
    results = {}
    with torch.inference_mode():
        for real, padded in ((40, 64), (77, 128), (200, 256)):
            context = torch.randn(1, padded, width, generator=gen, device="cuda", dtype=dtype)
            exact = dit(x, timestep, context[:, :real], transformer_options={})
            unmasked = dit(x, timestep, context, transformer_options={})
            masked = dit(
                x,
                timestep,
                context,
                transformer_options={"optimized_attention_override": real_text_rows_only(real, padded)},
            )
            assert not torch.equal(unmasked, exact), "padded rows that attend must change the output"
            results[(real, padded)] = (torch.equal(masked, exact), (masked.float() - exact.float()).abs().max().item())
    print(f"{adapter.display_name} padded text rows kept out of attention, bit-equal to exact length: {results}")
    measured = all(equal for equal, _ in results.values())
    assert measured == adapter.padded_text_rows_exact, results
