"""HiDream-O1 and SeedVR2 are declared unsupported (their modules in
bcg_runtime/comfy/models/ say why, file:line).

Each test checks, in this very ComfyUI, that the host read the reason cites is still where it
says (the test fails when ComfyUI changes that code, so the refusal is looked at again), that the
class is refused by name (``UNSUPPORTED``) and served by no adapter. 0.8.0 has none of these
classes: skipped there, saying so.

Source audit (ComfyUI 0.33.0):

hidream_o1 (``bcg_runtime/comfy/models/hidream_o1.py``, comfy/ldm/hidream_o1/model.py): ``_forward`` l.209-227
searches ``self._kv_cache_entries`` (written at l.283) with ``torch.equal(ck, input_ids)`` and
``torch.equal(ep, pos_ids_key)`` (l.223-225), host reads of the token ids and positions; the reference-image path
(l.161-179) keeps ``self._visual_cache`` keyed by the input's identity and calls
``(input_ids[0] == IMAGE_TOKEN_ID).nonzero()`` (l.179).
"""

import importlib
import inspect

import pytest

from bcg_runtime.comfy.models import ADAPTERS, UNSUPPORTED, hidream_o1, seedvr2

pytestmark = pytest.mark.comfy

#: (refusal module, ldm module, function, file, {cited line: text on it})
CITED = [
    (
        hidream_o1,
        "comfy.ldm.hidream_o1.model",
        "HiDreamO1Transformer._forward",
        {223: "torch.equal(ck, input_ids)", 179: ".nonzero("},
    ),
    (
        seedvr2,
        "comfy.ldm.seedvr.model",
        "repeat_concat",
        {57: "vid_len.tolist()", 58: "txt_len.tolist()", 1115: "hid_len.tolist()"},
    ),
]


@pytest.mark.parametrize("module, ldm, function, lines", CITED, ids=[c[0].CONFIG_CLASSES[0] for c in CITED])
def test_the_cited_host_read_is_where_the_reason_says(module, ldm, function, lines):
    import comfy.supported_models

    [name] = module.CONFIG_CLASSES
    if not hasattr(comfy.supported_models, name):
        pytest.skip(f"this ComfyUI has no {name} (added after 0.8.0)")
    source = inspect.getsource(importlib.import_module(ldm)).splitlines()
    for number, text in lines.items():
        assert text in source[number - 1], (name, number, source[number - 1])
    obj = importlib.import_module(ldm)
    for part in function.split("."):
        obj = getattr(obj, part)
    first = inspect.getsourcelines(obj)[1]
    assert first <= min(lines), (name, function, first)
    assert UNSUPPORTED[name] == module.UNSUPPORTED_REASON
    assert not any(name in a.config_classes for a in ADAPTERS)


#: (class, ldm module, DiT class, line of its ``forward`` the reason cites): DiTs whose forward
#: does not run through ComfyUI's DIFFUSION_MODEL wrapper (``dit_pending.py``), so BCG's hook is
#: never entered. 0.8.0 has HunyuanDiT and PixArt; the others are skipped there.
NO_WRAPPER = [
    ("HunyuanDiT", "comfy.ldm.hydit.models", "HunYuanDiT", 274),
    ("HunyuanDiT1", "comfy.ldm.hydit.models", "HunYuanDiT", 274),
    ("PixArtAlpha", "comfy.ldm.pixart.pixartms", "PixArtMS", 219),
    ("PixArtSigma", "comfy.ldm.pixart.pixartms", "PixArtMS", 219),
    ("GenmoMochi", "comfy.ldm.genmo.joint_model.asymm_models_joint", "AsymmDiTJoint", 487),
    ("Boogu", "comfy.ldm.boogu.model", "BooguTransformer2DModel", 255),
]


@pytest.mark.parametrize("name, ldm, dit, line", NO_WRAPPER, ids=[c[0] for c in NO_WRAPPER])
def test_a_forward_outside_the_wrapper_is_refused_at_the_cited_line(name, ldm, dit, line):
    """The cited ``forward`` starts at that line of this ComfyUI, never enters a
    ``WrapperExecutor`` (the DIFFUSION_MODEL wrapper chain BCG hooks), and the class is refused
    by name with that line, served by no adapter."""
    import comfy.supported_models

    if not hasattr(comfy.supported_models, name):
        pytest.skip(f"this ComfyUI has no {name}")
    try:
        module = importlib.import_module(ldm)
    except ImportError as error:
        pytest.skip(f"this ComfyUI has no {ldm}: {error}")
    forward = getattr(module, dit).forward
    source, first = inspect.getsourcelines(forward)
    assert first == line, (name, first)
    assert "WrapperExecutor" not in "".join(source), name
    assert UNSUPPORTED[name].startswith("refused:") and f":{line}" in UNSUPPORTED[name], UNSUPPORTED[name]
    assert not any(name in a.config_classes for a in ADAPTERS)
