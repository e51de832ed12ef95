"""Chroma and Chroma Radiance: the adapters inside real ComfyUI, on depth-1 models at the real width.

Chroma's T5 context reaches the DiT at its exact length (no padding, no mask), so cond and uncond
of different lengths are two batch-1 calls, each replaying its own graph, and equal lengths batch
into one call. Chroma Radiance is the same DiT in pixel space: labels count pixels (1 per cell),
``chroma_radiance_options`` enter the key, and the graphs hold the NeRF table the embedder's cache keeps.
Until their GPU exactness test has passed on the H200 both stay off for users unless they opt in.
CPU stand-in here; on the H200 test_full_size_cuda.py samples both at 512² and 1024².
ComfyUI 0.8.0's Radiance predates ``use_sequential_txt_ids``: its tests skip there.

Source audit (ComfyUI 0.33.0):

chroma (``bcg_runtime/comfy/models/chroma.py``). Hidden 3072, 24 heads, 19 double + 38 single blocks, patch 2 on
the 16-channel FLUX VAE latent. Chroma's T5-XXL (``text_encoders/pixart_t5.py``) tokenizes with ``min_length=1``
and no padding, and its encoder is built without attention masks (``sd3_clip.T5XXLModel``'s default
``attention_mask=False``). ``model_base.Flux.extra_conds`` wraps the context in ``CONDRegular``, which batches only
equal shapes. A DiT ``attention_mask`` appears only with ``attention_mask_img_shape`` (StyleModelApply's
attention bias). Host syncs and value-dependent Python (``comfy/ldm/chroma/model.py``); none found:

- model.py:162-176 (approximator input): ``timestep_embedding`` of ``timesteps`` and ``guidance``
  (device tensors; ``flux/layers.py:29-48`` has no sync), ``torch.arange(344)`` of a Python
  constant, repeats by ``img.shape[0]``: device work on shapes and constants only.
- model.py:115-140 ``get_modulations``: slices of the modulation tensor at offsets computed from
  block indices and the configured block counts (Python ints): no value is read.
- model.py:188/235 ``i not in self.skip_mmdit`` / ``self.skip_dit``: Python lists set empty in
  ``__init__`` that no ComfyUI code changes (a custom node editing them in place would change the
  forward without changing any key: not covered).
- model.py:193/237 ``blocks_replace`` (``patches_replace``) and ``control``: patches make the call
  eager (options.py); ControlNet outputs are tensor arguments whose structure is in the key.
- model.py:277-295 ``_forward``: padding to the patch size, ``rearrange`` and ids from ``x.shape``
  (``torch.linspace`` over Python numbers); ``guidance`` is the tensor ``model_base.Chroma``
  always adds (0 unless the conditioning sets one).
- The double/single blocks are FLUX's (``flux/layers.py``, no sync).
- The forward runs through ``WrapperExecutor`` over ``_forward`` (model.py:270-275) in both 0.8.0 and
  0.33.0, so BCG sees every call. 0.33.0 adds ``img_slice`` to a copy of ``transformer_options``
  (bookkeeping in options.py).

chroma_radiance (``bcg_runtime/comfy/models/chroma_radiance.py``). ``latent_formats.ChromaRadiance``: 3 channels,
``spacial_downscale_ratio`` 1; ``EmptyChromaRadianceLatentImage`` makes ``[B, 3, height, width]``, so the
recipe's ``latent_downscale`` is 1. A 16-pixel patch conv (``img_in_patch``) makes the tokens (a 1024² image is
64x64 = 4096 tokens, as FLUX at 1024²), and a NeRF head turns each token's hidden state into the weights of a
per-patch MLP over that patch's pixels. Host syncs and value-dependent Python (``comfy/ldm/chroma_radiance/``);
none, and one cached tensor:

- model.py:303-323 ``_forward``: padding to the patch size and ids from ``x.shape``;
  ``radiance_get_override_params`` reads ``transformer_options["chroma_radiance_options"]``
  (ChromaRadianceOptions: ``nerf_tile_size``, ``use_sequential_txt_ids``), plain values that
  options.py puts in the key; ``use_sequential_txt_ids`` adds an ``arange`` over the context length.
- model.py:184-226 ``forward_nerf``: ``unfold``/``fold`` and reshapes by shapes; the tiling branch
  (model.py:203) and its loop (model.py:246, ``range(0, num_patches, tile_size)``) depend only on
  the patch count and the tile size (512, or the option): the unpatching has no data-dependent shape.
- model.py:340 x0 checkpoints (``__x0__`` buffer) divide by ``timesteps`` on the device.
- layers.py:150-173 ``NerfGLUBlock``: generated weights, ``normalize`` and ``bmm``: device work.
- layers.py:47-48 ``NerfEmbedder.fetch_pos`` is an ``lru_cache(maxsize=4)`` over
  ``(embedder, patch_size, device, dtype)``: the DCT table is computed once (in the eager runs before
  a capture) and kept only by that cache, while a graph reads it by address. The runner finds it
  at capture as an outside read and the entry holds it (``NERF_TABLE``), so an eviction (more
  than four embedder/device/dtype combinations in one process) frees nothing a graph reads; the
  table a later eager call recomputes holds the same values, which depend only on the patch size,
  the embedder's ``max_freqs``, the device and the dtype.
- The forward is ``Chroma.forward`` (the ``WrapperExecutor`` over ``_forward``) in 0.8.0 and 0.33.0.
  ComfyUI 0.8.0's Radiance predates ``use_sequential_txt_ids``; the recipe's value (False) is what
  0.8.0 does, so the recipe (``bench/recipes/chroma_radiance.py``) builds there without it
  (``FamilyInfo.added_later``).
"""

import gc
import weakref

import pytest
import torch
from bcg_testing import WARMUP_ONLY, check_gpu_verification_state, conds, session_of, skip_unless_host_builds

from bench import synthetic

pytestmark = pytest.mark.comfy
FIRST = "first call, captured"
CHROMA, RADIANCE = "chroma", "chroma_radiance"


@pytest.fixture(scope="module", params=[CHROMA, RADIANCE])
def family_model(request):
    """(family, depth-1 ModelPatcher); one family's model at a time (pytest groups by param)."""
    import comfy.model_management as mm

    skip_unless_host_builds(request.param)
    model = synthetic.load_model(request.param, depth=1, seed=0)
    yield request.param, model
    del model
    mm.unload_all_models()
    mm.cleanup_models_gc()


def sample(model, family, cfg, positive, negative, seed, steps=3, width=64, height=64):
    return synthetic.sample(model, family, width, height, steps, cfg, positive, negative, seed=seed)


def test_served_without_opt_in_once_verified_on_the_h200(pack, family_model, standin_graphs, monkeypatch):
    _, nodes = pack
    family, model = family_model
    positive, negative = conds(family)
    check_gpu_verification_state(
        nodes, model, family, monkeypatch, lambda m: sample(m, family, 2.0, positive, negative, seed=3, steps=2)
    )


def test_each_prompt_length_is_its_own_graph_and_replays_exactly(pack, family_model, standin_graphs):
    _, nodes = pack
    family, model = family_model
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    assert session.config.mode.value == "full"
    positive, negative = conds(family)  # 40 and 17 tokens: two batch-1 calls per step

    out = sample(bcg_model, family, 2.0, positive, negative, seed=3)
    assert torch.equal(out, sample(model, family, 2.0, positive, negative, seed=3))
    run = session.last_run
    assert run["calls"] == 6 and run["replayed"] == 4, run
    assert run["eager"] == {f"{FIRST}: 64x64 txt40 b1": 1, f"{FIRST}: 64x64 txt17 b1": 1}, run

    # cfg 1: the positive alone, on the graph captured above.
    out = sample(bcg_model, family, 1.0, positive, negative, seed=4)
    assert torch.equal(out, sample(model, family, 1.0, positive, negative, seed=4))
    assert session.last_run["calls"] == 3 and session.last_run["replayed"] == 3, session.last_run

    # Another prompt pair of the same lengths and another seed: no new capture.
    other_pos, other_neg = (
        synthetic.make_conditioning(family, 40, seed=5),
        synthetic.make_conditioning(family, 17, seed=6),
    )
    out = sample(bcg_model, family, 2.0, other_pos, other_neg, seed=5)
    assert torch.equal(out, sample(model, family, 2.0, other_pos, other_neg, seed=5))
    assert session.last_run["replayed"] == 6 and session.runner.stats.captures == 2, session.last_run

    # Equal lengths batch cond and uncond into one call: a batch-2 signature of its own.
    same_neg = synthetic.make_conditioning(family, 40, seed=7)
    out = sample(bcg_model, family, 2.0, positive, same_neg, seed=6)
    assert torch.equal(out, sample(model, family, 2.0, positive, same_neg, seed=6))
    run = session.last_run
    assert run["calls"] == 3 and run["replayed"] == 2 and run["eager"] == {f"{FIRST}: 64x64 txt40 b2": 1}, run


def test_an_unwarmed_size_falls_back_with_its_label(pack, family_model, standin_graphs):
    _, nodes = pack
    family, model = family_model
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    positive, negative = conds(family)
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, negative).args
    assert "replay exact" in report, report
    out = sample(warmed, family, 1.0, positive, negative, seed=3, steps=2)
    assert torch.equal(out, sample(model, family, 1.0, positive, negative, seed=3, steps=2))
    assert session_of(warmed).last_run["replayed"] == 2, session_of(warmed).last_run
    out = sample(warmed, family, 1.0, positive, negative, seed=3, steps=2, width=96)
    assert torch.equal(out, sample(model, family, 1.0, positive, negative, seed=3, steps=2, width=96))
    assert session_of(warmed).last_run["eager"] == {"not captured: 96x64 txt40 b1": 2}, session_of(warmed).last_run


def test_radiance_latents_are_pixels_as_its_empty_latent_node_makes_them(pack, family_model):
    family, model = family_model
    if family != RADIANCE:
        pytest.skip("Chroma's latent is FLUX's (16 channels, 1/8): covered by test_synthetic_models")
    from comfy_extras.nodes_chroma_radiance import EmptyChromaRadianceLatentImage

    from bcg_runtime.comfy.models import by_family

    node_latent = EmptyChromaRadianceLatentImage.execute(width=96, height=64, batch_size=1).args[0]["samples"]
    ours = synthetic.empty_latent(family, 96, 64)
    assert node_latent.shape == ours.shape == (1, 3, 64, 96)
    info = synthetic.family_info(family)
    # 0.8.0's latent format has no spacial_downscale_ratio: its empty-latent node above is the evidence there.
    host_ratio = getattr(model.model.latent_format, "spacial_downscale_ratio", 1)
    assert by_family(family).latent_scale == info.latent_downscale == host_ratio == 1


def test_radiance_options_enter_the_key_and_replay_exactly(pack, family_model, standin_graphs):
    """ChromaRadianceOptions puts ``chroma_radiance_options`` in transformer_options: each value is
    its own signature. Sequential text ids change the output (a replay of the plain graph would be
    wrong); a tile size of 8 patches (a 64² image has 16) takes the tiled NeRF path."""
    _, nodes = pack
    family, model = family_model
    if family != RADIANCE:
        pytest.skip("chroma_radiance_options is read by Chroma Radiance only")
    reference = model.clone()
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, _ = conds(family)
    plain = sample(bcg_model, family, 1.0, positive, positive, seed=3)
    assert torch.equal(plain, sample(model, family, 1.0, positive, positive, seed=3))
    assert session.runner.stats.captures == 1

    from comfy.ldm.chroma_radiance.model import ChromaRadianceParams

    # 0.8.0's Radiance has no use_sequential_txt_ids (the node refuses an unknown key there).
    known = set(ChromaRadianceParams.__dataclass_fields__)
    option_sets = [o for o in ({"use_sequential_txt_ids": True}, {"nerf_tile_size": 8}) if set(o) <= known]
    assert {"nerf_tile_size": 8} in option_sets
    for options in option_sets:
        for m in (reference, bcg_model):
            m.model_options.setdefault("transformer_options", {})["chroma_radiance_options"] = options
        eager = sample(reference, family, 1.0, positive, positive, seed=3)
        out = sample(bcg_model, family, 1.0, positive, positive, seed=3)
        assert torch.equal(out, eager), options
        run = session.last_run
        assert run["replayed"] == 2 and run["eager"] == {f"{FIRST}: 64x64 txt40 b1": 1}, (options, run)
        if "use_sequential_txt_ids" in options:
            assert not torch.equal(eager, plain), "sequential text ids should change the output"
    assert session.runner.stats.captures == 1 + len(option_sets)


def test_radiance_replays_exactly_after_the_nerf_table_cache_let_go(pack, family_model, standin_graphs):
    """NerfEmbedder.fetch_pos (an lru_cache of 4) is the only holder of the DCT table a graph reads
    by address; the entry holds it too (the adapter's ``outside_reads``), so a cache that lets it
    go (an eviction, a clear) frees nothing under a graph, and the replay still equals eager."""
    _, nodes = pack
    family, model = family_model
    if family != RADIANCE:
        pytest.skip("only Chroma Radiance reads a cached NeRF table")
    from comfy.ldm.chroma_radiance.layers import NerfEmbedder

    assert NerfEmbedder.fetch_pos.cache_parameters()["maxsize"] == 4
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, negative = conds(family)
    sample(bcg_model, family, 2.0, positive, negative, seed=3, steps=2)  # captures both prompt lengths
    entries = session.runner.table.entries.values()
    # The tables, first read by the embedder's ``dct.repeat``; on CUDA an entry may also hold
    # scalars its forward writes itself (a replay writes them as eager does).
    held = [weakref.ref(h.read.tensor) for e in entries for h in e.outside if h.read.op == "aten.repeat.default"]
    assert len(held) == 2, f"each entry holds the table its graph reads: {[e.outside for e in entries]}"
    assert all(not h.read.written for e in entries for h in e.outside if h.read.op == "aten.repeat.default")
    NerfEmbedder.fetch_pos.cache_clear()
    gc.collect()
    assert all(ref() is not None for ref in held), "the cache let go: only the entries hold the tables now"
    out = sample(bcg_model, family, 2.0, positive, negative, seed=4, steps=2)
    eager = sample(model, family, 2.0, positive, negative, seed=4, steps=2)
    assert torch.equal(out, eager), f"max abs diff {(out - eager).abs().max()}, {session.last_run}"
    assert session.last_run["replayed"] == session.last_run["calls"] == 4, session.last_run
