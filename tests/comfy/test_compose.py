"""BCG composed with the step caches ComfyUI users stack: core's EasyCache and LazyCache.

Both skip DiT calls from wrappers outside BCG's (EasyCache's DIFFUSION_MODEL wrapper is outer,
BCG moves itself innermost; LazyCache's PREDICT_NOISE wrapper is outside the model), deciding from
the DiT's outputs. A call they let through replays; a skipped call never reaches BCG. Since a
replay is bit-equal, the cache makes the same decisions and the image equals the cache alone's,
bit for bit, in either node order. CPU stand-in here; the same tests run on the H200 with real
graphs (``BCG_COMFY_TEST_CPU=0``)."""

import pytest
import torch
from bcg_testing import conds, session_of

from bench import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "zimage"
STEPS = 8


def cache_nodes():
    from comfy_extras import nodes_easycache

    return {"EasyCache": nodes_easycache.EasyCacheNode, "LazyCache": nodes_easycache.LazyCacheNode}


def with_cache(node, model):
    # A high threshold from the start, so the cache skips steps even on a random-weight model.
    (cached,) = node.execute(model, reuse_threshold=3.0, start_percent=0.0, end_percent=1.0, verbose=False).args
    return cached


@pytest.mark.parametrize("cache", ["EasyCache", "LazyCache"])
@pytest.mark.parametrize("order", ["cache then BCG", "BCG then cache"])
def test_a_step_cache_with_bcg_gives_the_cache_alone_image_and_replays_what_it_runs(
    pack, model, standin_graphs, cache, order
):
    _, nodes = pack
    node = cache_nodes()[cache]
    positive, negative = conds(FAMILY)

    def sample(m):
        return synthetic.sample(m, FAMILY, 64, 64, STEPS, 2.0, positive, negative, seed=3)

    alone = with_cache(node, model)
    if order == "cache then BCG":
        (both,) = nodes["BCGApply"].execute(with_cache(node, model), "auto").args
    else:
        (bcg,) = nodes["BCGApply"].execute(model, "auto").args
        both = with_cache(node, bcg)
    expected = sample(alone)
    assert not torch.equal(expected, sample(model)), "the cache skipped nothing: the test would prove nothing"

    for run in range(2):  # the first run captures each shape on its first call, the second replays
        assert torch.equal(sample(both), expected), (cache, order, run)
        last = session_of(both).last_run
        assert last["calls"] < 2 * STEPS, f"{cache} skipped no DiT call with BCG: {last}"
        assert last["replayed"] >= 1 and not any("unknown transformer_options" in r for r in last["eager"]), last
    assert last["replayed"] == last["calls"], last


def test_fp8_weights_replay_bit_equal_to_fp8_eager(pack, standin_graphs):
    """UNETLoader's ``weight_dtype: fp8_e4m3fn``: weights stored in fp8 and cast to the compute
    dtype inside every forward (ComfyUI's manual cast). The casts are kernels like any other: the
    graph holds them, and replay equals the fp8 model's own eager run."""
    _, nodes = pack
    fp8 = synthetic.load_model(FAMILY, depth=1, seed=0, model_options={"dtype": torch.float8_e4m3fn})
    assert {p.dtype for p in fp8.model.diffusion_model.parameters()} == {torch.float8_e4m3fn}
    positive, negative = conds(FAMILY)
    (bcg,) = nodes["BCGApply"].execute(fp8, "auto").args
    for seed in (3, 4):  # captured on first sight, then a second prompt replays
        out = synthetic.sample(bcg, FAMILY, 64, 64, 3, 2.0, positive, negative, seed=seed)
        assert torch.equal(out, synthetic.sample(fp8, FAMILY, 64, 64, 3, 2.0, positive, negative, seed=seed))
    last = session_of(bcg).last_run
    assert last["replayed"] == last["calls"] == 6, last
