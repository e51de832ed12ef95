"""Ideogram 4 (``Ideogram4``): the adapter inside real ComfyUI, on a depth-1 model at the real width.

The Qwen3-VL context reaches the DiT unpadded, so each prompt length is its own signature: cond
and uncond of different lengths run as two batch-1 calls. A text mask with zeros (a padded
prompt batch) reaches the DiT, which writes it into its segment ids by boolean-mask assignment:
that is a masked fill on the device, so one graph serves every mask of its shape and reads the
mask's values at replay. Until its GPU exactness test has passed on the H200 the family stays off
for users unless they opt in. CPU stand-in here; test_full_size_cuda.py samples the full model.
ComfyUI 0.8.0 has no Ideogram 4: these tests skip there.

Source audit (ComfyUI 0.33.0):

``bcg_runtime/comfy/models/ideogram4.py``. 34 blocks of 4608 (18 heads of 256), one token per latent cell. The
widths are not read from the checkpoint: ``model_detection`` finds only ``in_channels`` and ``num_layers`` and
``supported_models.Ideogram4.unet_extra_config`` supplies the rest. Qwen3-VL's tokenizer:
``pad_to_max_length=False``. Text RoPE positions are 0..L-1 and image positions start at 65536, so padding would
not move the image; but padded rows would be attended unless masked, and a mask changes the attention kernel:
stock ComfyUI sends neither. Read for host syncs and data-dependent shapes (``comfy/ldm/ideogram4/model.py``):

- ``:285-287`` the text mask: ``pad = (attention_mask == 0)`` then ``segment_ids[:, :L][pad] = -1``
  and ``indicator[:, :L][pad] = 0``. Boolean-mask *assignment* of a Python scalar never takes
  ``nonzero``: Python's ``__setitem__`` wraps the scalar in a CPU tensor when the target is on
  CUDA, and ``index_put_`` then dispatches a single boolean index on the target's device with a
  one-element CPU value to ``masked_fill_`` (``canDispatchToMaskedFill`` in ATen): an in-place
  elementwise kernel that reads the mask on the device, with the output shape fixed by the
  target. Shape-only, graph-safe, and the mask's *values* are read at replay (the test changes
  them under one graph). The dispatch needs the mask on the target's device, which ComfyUI's
  conditioning always puts there; a mask elsewhere would take the ``nonzero`` path, so
  ``Ideogram4Adapter.refusal`` sends such a call eager.
- ``:212`` ``attn_mask.dtype == torch.bool`` and ``:196`` ``llm_features is not None``, ``:321``
  ``context is None`` (the image-only path): dtype and presence of arguments, both in the key.
- ``:64`` ``in_training``: a process flag, constant across a run. ``:70`` ``comfy_kitchen``
  ``rms_rope_split_half``: backend chosen from shapes, strides and dtypes, no host read.
- ``:206`` ``precompute_freqs_cis`` (``text_encoders/llama.py``) with interleaved MRoPE: Python
  loops over constant sections, positions from ``arange`` of shapes.
- The masked attention (``optimized_attention_masked`` with an additive float mask): SDPA reads
  the mask on the device; no host read.
- No op syncs with the host, so mode 'full' is safe. ``forward`` runs ``_forward`` through the
  DIFFUSION_MODEL ``WrapperExecutor`` (``:309``). ComfyUI 0.8.0 has no Ideogram 4.
"""

import importlib.util

import pytest
import torch
from bcg_testing import (
    WARMUP_ONLY,
    check_each_prompt_length_is_its_own_graph,
    check_gpu_verification_state,
    conds,
    session_of,
    skip_unless_host_builds,
)

from bench import synthetic

pytestmark = pytest.mark.comfy
FAMILY = "ideogram4"
FIRST = "first call, captured"


@pytest.fixture(scope="module")
def model():
    if importlib.util.find_spec("comfy.ldm.ideogram4") is None:
        pytest.skip("this ComfyUI has no Ideogram 4 (comfy.ldm.ideogram4 arrived after 0.8.0; 0.33.0 has it)")
    skip_unless_host_builds(FAMILY)
    return synthetic.load_model(FAMILY, depth=1, seed=0)


def masked(context_seed, length, zeros_from):
    """A CONDITIONING whose text mask is zero from ``zeros_from`` on, as a padded batch member's is."""
    [[context, extras]] = synthetic.make_conditioning(FAMILY, length, seed=context_seed)
    mask = extras["attention_mask"].clone()
    mask[:, zeros_from:] = 0
    return [[context, {**extras, "attention_mask": mask}]]


def test_served_without_opt_in_once_verified_on_the_h200(pack, model, standin_graphs, monkeypatch):
    check_gpu_verification_state(pack[1], model, FAMILY, monkeypatch)


def test_each_prompt_length_is_its_own_graph_and_replays_exactly(pack, model, standin_graphs):
    check_each_prompt_length_is_its_own_graph(pack[1], model, FAMILY)


def test_a_text_mask_is_read_at_replay_not_frozen_into_the_graph(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    _, negative = conds(FAMILY)
    first, second = masked(1, 40, 30), masked(1, 40, 22)  # one context, zeros from other rows on
    eager_first = synthetic.sample(model, FAMILY, 64, 64, 3, 2.0, first, negative, seed=3)
    eager_second = synthetic.sample(model, FAMILY, 64, 64, 3, 2.0, second, negative, seed=3)
    assert not torch.equal(eager_first, eager_second), "the mask must change the output for this test to mean anything"

    out = synthetic.sample(bcg_model, FAMILY, 64, 64, 3, 2.0, first, negative, seed=3)
    assert torch.equal(out, eager_first)
    run = session.last_run
    assert run["calls"] == 6 and run["replayed"] == 4, run
    assert run["eager"] == {f"{FIRST}: 64x64 txt40 masked b1": 1, f"{FIRST}: 64x64 txt17 b1": 1}, run

    # The same shapes with the zeros elsewhere: the same graph, which reads the new mask.
    out = synthetic.sample(bcg_model, FAMILY, 64, 64, 3, 2.0, second, negative, seed=3)
    assert torch.equal(out, eager_second)
    assert session.last_run["replayed"] == 6 and session.runner.stats.captures == 2, session.last_run


def test_an_unwarmed_size_falls_back_with_its_label(pack, model, standin_graphs):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto", capture=WARMUP_ONLY).args
    positive, negative = conds(FAMILY)
    warmed, report = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64", "", "1", positive, negative).args
    assert "replay exact" in report, report
    out = synthetic.sample(warmed, FAMILY, 64, 64, 2, 1.0, positive, negative, seed=3)
    assert torch.equal(out, synthetic.sample(model, FAMILY, 64, 64, 2, 1.0, positive, negative, seed=3))
    assert session_of(warmed).last_run["replayed"] == 2, session_of(warmed).last_run
    out = synthetic.sample(warmed, FAMILY, 96, 64, 2, 1.0, positive, negative, seed=3)
    assert torch.equal(out, synthetic.sample(model, FAMILY, 96, 64, 2, 1.0, positive, negative, seed=3))
    assert session_of(warmed).last_run["eager"] == {"not captured: 96x64 txt40 b1": 2}, session_of(warmed).last_run


def test_a_mask_away_from_the_latent_runs_eager_with_its_reason():
    """The boolean-mask assignment is a device-side masked fill only when mask and target share a
    device; otherwise ``index_put_`` would take ``nonzero``: the adapter refuses that call."""
    from bcg_runtime.comfy.models.ideogram4 import ADAPTER

    x = torch.zeros(1, 128, 4, 4, device="meta")
    call = {"x": x, "context": torch.zeros(1, 40, 8, device="meta"), "attention_mask": torch.ones(1, 40)}
    assert "nonzero" in ADAPTER.refusal(call)
    assert ADAPTER.refusal({**call, "attention_mask": torch.ones(1, 40, device="meta")}) is None
    assert ADAPTER.refusal({**call, "attention_mask": None}) is None
    assert ADAPTER.label({**call, "attention_mask": None}) == "64x64 txt40 b1"
    assert ADAPTER.label(call) == "64x64 txt40 masked b1"
