"""comfy layer: what each family's captured forward reads outside its arguments and weights.

The runner finds it at every capture (``core/outside_reads.py``) and holds it for the graph's
life; this test derives it for every family from ComfyUI's own model classes instead of from a
list: BCG Apply on the family's depth-1 model, a 1-step cfg 1 KSampler-path run on the CPU stand-in
(its call captured on sight: warm-up runs, capture, proof), then the entry's held tensors. Each must be one the family's
adapter names in ``outside_reads`` (the op that first reads it, with what it is and why holding it
keeps the replay eager's); a new tensor some ComfyUI version makes its forward reach fails here
with its dtype, shape and first op. The other way round, every name must be read by one of the
families that share the adapter (LTX-2 and 2.3 share one; only 2.3 reads its float64 RoPE table):
a name none of them reads any more is a stale permission and fails too. A name with a device type
holds only where the model runs on it (a host table CUDA stages, a table in the model's dtype), so
both checks hold on the CPU stand-in and on CUDA.
"""

import gc

import pytest
import torch
from bcg_testing import conds, session_of, skip_unless_host_builds

from bench import synthetic

pytestmark = pytest.mark.comfy

#: The outside reads each family's captures held, by family, for the check across an adapter's variants.
FOUND: dict[str, set] = {}


@pytest.fixture(scope="module", params=sorted(synthetic.FAMILIES))
def family_model(request):
    import comfy.model_management as mm

    skip_unless_host_builds(request.param)
    model = synthetic.load_model(request.param, depth=synthetic.family_info(request.param).smallest_depth, seed=0)
    yield request.param, model
    del model
    mm.unload_all_models()
    mm.cleanup_models_gc()
    gc.collect()


def names_on(adapter, device: str) -> set[tuple[str, str]]:
    """The ``(first op, dtype)`` names of ``adapter.outside_reads`` that hold where the model runs
    on ``device`` (a name with a device type holds only there)."""
    return {key[:2] for key, _ in adapter.outside_reads if len(key) == 2 or key[2] == device}


def test_every_tensor_a_capture_holds_is_one_the_adapter_names(pack, family_model, standin_graphs):
    _, nodes = pack
    family, model = family_model
    (bcg_model,) = nodes["BCGApply"].execute(model, "auto").args
    session = session_of(bcg_model)
    positive, negative = conds(family)
    with torch.inference_mode():
        synthetic.sample(bcg_model, family, 64, 64, 1, 1.0, positive, negative, seed=3)
    entries = list(session.runner.table.entries.values())
    if not entries:
        pytest.skip(f"{family}: nothing captured on the CPU stand-in ({session.last_run})")
    found = {
        (held.read.op, str(held.read.tensor.dtype).replace("torch.", "")): held.read.describe()
        for e in entries
        for held in e.outside
    }
    device = model.load_device.type
    named = names_on(session.adapter, device)
    print(f"{family} on {device}: {len(entries)} entries, outside {sorted(found.values())}")
    unnamed = {k: v for k, v in found.items() if k not in named}
    assert not unnamed, f"{family}: captures hold tensors its adapter does not name (outside_reads): {unnamed}"
    FOUND[family] = (device, set(found))


def test_every_name_an_adapter_gives_is_read_by_one_of_its_variants():
    """Runs after the cases above (pytest keeps definition order): for each adapter with names, the
    union of what its families' captures held must cover them. An adapter one of whose families did
    not run here (not built by this ComfyUI, nothing captured, deselected) is left unchecked, named."""
    variants: dict[str, list[str]] = {}
    for family in synthetic.FAMILIES:
        variants.setdefault(synthetic.family_info(family).adapter.family, []).append(family)
    checked, unchecked, stale = [], {}, {}
    for adapter_family, families in sorted(variants.items()):
        adapter = synthetic.family_info(families[0]).adapter
        if not adapter.outside_reads:
            continue
        missing = [f for f in families if f not in FOUND]
        if missing:
            unchecked[adapter_family] = missing
            continue
        checked.append(adapter_family)
        named = set().union(*(names_on(adapter, FOUND[f][0]) for f in families))
        unread = named - set().union(*(FOUND[f][1] for f in families))
        if unread:
            stale[adapter_family] = sorted(unread)
    print(f"outside_reads names checked for {checked}; unchecked (families that did not run): {unchecked}")
    assert not stale, f"outside_reads names no family of the adapter read (stale, remove them): {stale}"
    if not checked:
        pytest.skip(f"no adapter with outside_reads had all its families run here: {unchecked}")
