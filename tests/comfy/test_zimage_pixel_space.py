"""Z-Image pixel space (``ZImagePixelSpace``): the adapter inside real ComfyUI, on a depth-1 model
at Z-Image's width with the pixel decoder (ComfyUI 0.33.0; 0.8.0 has no such class and skips).

The model works on RGB pixels (16-pixel patches), so labels count pixels. The model pads captions
to 32 itself, so as for Z-Image each bucket of 32 lengths is one graph (test_zimage_text_buckets.py):
cond and uncond of different buckets run as two batch-1 calls, each replaying its own graph. The NeRF DCT table the embedder's
cache keeps is held by every graph that reads it, so an eviction from that cache frees nothing
under a graph. CPU stand-in here;
test_full_size_cuda.py samples the full-depth model at 512² and 1024².

Source audit (ComfyUI 0.33.0): host syncs and value-dependent branches (0.33.0, ``comfy/ldm/lumina/model.py``):

- l.1046-1048 ``omni = len(ref_latents) > 0`` and the timestep concat: a Python list's length,
  in the key through ``ref_latents``' shapes (as Z-Image Omni). l.1059 NewBie's pooled branch is
  None for this config (``clip_text_pooled_proj`` absent).
- l.1054, l.1066-1075 raw pixel patches: views and reshapes by ``x.shape``; ``pad_to_patch_size`` by shapes.
- l.414-416 ``pad_zimage``, l.654-715 ``embed_cap`` / ``embed_all``, l.717-812
  ``patchify_and_embed``: pad counts, RoPE ids and ``timestep_zero_index`` from shapes; the masks
  are None (l.721, l.790, l.813). l.420 ``pos_ids_x`` reads ``rope_options`` (Python numbers from
  ``transformer_options``, in the key by options.py).
- l.1095-1100 ``double_block`` patches: any patch makes the call eager (options.py).
- l.1105-1118: the decoder reads the first ``N`` image tokens (``N`` from shapes) and prepends a
  zero caption placeholder; ``unpatchify`` loops over the batch by shape.
- l.971-980 ``SimpleMLPAdaLN``: ``weight_dtype`` from the weight's dtype; residual blocks and the
  final layer are device work.
- ``chroma_radiance/layers.py:47`` ``NerfEmbedder.fetch_pos`` is an ``lru_cache(maxsize=4)`` over
  ``(embedder, patch_size, device, dtype)`` (patch size 1 here: the decoder sees one token per
  patch): graphs read the cached DCT table by address; the entry holds it (``outside_reads``, as
  for Chroma Radiance), so an eviction from the cache frees nothing a graph reads.
- ``forward`` (l.1122) runs ``_forward`` through the DIFFUSION_MODEL ``WrapperExecutor`` and then
  ``(x - neg_x0) / timesteps`` outside it, eager on the graph's output.

No op syncs with the host, so mode 'full' is safe for every call not refused.
"""

import functools
import gc
import weakref

import pytest
import torch
from bcg_testing import (
    WARMUP_ONLY,
    check_each_prompt_length_is_its_own_graph,
    check_gpu_verification_state,
    conds,
    session_of,
)

from bench import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "zimage_pixel_space"


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_captions_of_two_buckets_are_two_graphs_and_replay_exactly(pack, model, standin_graphs):
    check_each_prompt_length_is_its_own_graph(pack[1], model, FAMILY)


def test_an_unwarmed_size_falls_back_with_its_pixel_label(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    positive, negative = conds(FAMILY)
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, negative).args
    assert "64x64 txt33-64 b1: captured" in report and "replay exact" in report, report  # 40 tokens: bucket 33-64
    out = synthetic.sample(warmed, FAMILY, 64, 64, 2, 1.0, positive, negative, seed=3)
    assert torch.equal(out, synthetic.sample(model, FAMILY, 64, 64, 2, 1.0, positive, negative, seed=3))
    assert session_of(warmed).last_run["replayed"] == 2, session_of(warmed).last_run
    out = synthetic.sample(warmed, FAMILY, 96, 64, 2, 1.0, positive, negative, seed=3)
    assert out.shape[-2:] == (64, 96)  # pixels: no VAE between the sampler and the DiT
    assert torch.equal(out, synthetic.sample(model, FAMILY, 96, 64, 2, 1.0, positive, negative, seed=3))
    assert session_of(warmed).last_run["eager"] == {"not captured: 96x64 txt33-64 b1": 2}, session_of(warmed).last_run


def test_a_dct_table_evicted_after_capture_frees_nothing_under_the_graph(pack, model, standin_graphs, monkeypatch):
    """Graphs read NerfEmbedder.fetch_pos's cached table by address and the entry holds it (the
    adapter's ``outside_reads``): with a cache of one, evicted between capture and replay, every
    call still replays and equals eager (which recomputes the same table)."""
    import comfy.ldm.chroma_radiance.layers as layers

    _, nodes = pack
    positive, negative = conds(FAMILY)
    tiny = functools.lru_cache(maxsize=1)(layers.NerfEmbedder.fetch_pos.__wrapped__)
    monkeypatch.setattr(layers.NerfEmbedder, "fetch_pos", tiny)
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    synthetic.sample(bcg_model, FAMILY, 64, 64, 2, 1.0, positive, negative, seed=3)  # captures
    (held,) = [weakref.ref(held.read.tensor) for e in session.runner.table.entries.values() for held in e.outside]
    embedder = model.model.diffusion_model.dec_net.input_embedder
    tiny(embedder, 3, torch.device("cpu"), torch.float32)  # evicts the table the graph reads
    gc.collect()
    assert held() is not None and tiny.cache_info().currsize == 1
    out = synthetic.sample(bcg_model, FAMILY, 64, 64, 2, 1.0, positive, negative, seed=4)
    assert torch.equal(out, synthetic.sample(model, FAMILY, 64, 64, 2, 1.0, positive, negative, seed=4))
    assert session.last_run["replayed"] == session.last_run["calls"] == 2, session.last_run
