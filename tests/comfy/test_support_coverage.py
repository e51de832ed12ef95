"""Every model class of the ComfyUI this runs on is named by the pack: supported (an adapter's
``config_classes``), not served with its reason (``models.UNSUPPORTED``: refused, or not supported
yet), or out of scope (``models.OUT_OF_SCOPE``: UNets, audio, 3-D and vision models).

The class list is the host's own ``comfy.supported_models.models`` (what its loader detects
from), so a ComfyUI that adds a class fails here until the class is placed; the support table
(docs/models.md, scripts/gen_support_table.py) is generated from the same lists. Without ComfyUI
the comfy layer is skipped with its reason (conftest.py).
"""

import pytest

pytestmark = pytest.mark.comfy


def _named():
    from bcg_runtime.comfy.models import ADAPTERS, OUT_OF_SCOPE, UNSUPPORTED

    supported = {name: adapter.family for adapter in ADAPTERS for name in adapter.config_classes}
    return supported, UNSUPPORTED, OUT_OF_SCOPE


def _host_classes():
    import comfy.supported_models

    return [cls.__name__ for cls in comfy.supported_models.models]


def test_every_host_model_class_is_supported_refused_or_out_of_scope():
    supported, unsupported, out_of_scope = _named()
    host = _host_classes()
    assert len(host) > 20, host  # the loader's list was read
    missing = [name for name in host if name not in supported and name not in unsupported and name not in out_of_scope]
    assert not missing, (
        f"comfy.supported_models classes the pack does not name: {missing}; give each an adapter, a reason in "
        "UNSUPPORTED_REASONS (bcg_runtime/comfy/models/dit_pending.py) or an OUT_OF_SCOPE entry, then run "
        "python scripts/gen_support_table.py"
    )


def test_no_class_is_both_supported_and_not():
    supported, unsupported, out_of_scope = _named()
    assert not set(supported) & set(unsupported), set(supported) & set(unsupported)
    assert not set(supported) & set(out_of_scope), set(supported) & set(out_of_scope)
    assert not set(unsupported) & set(out_of_scope), set(unsupported) & set(out_of_scope)


def test_every_reason_names_where_it_was_read():
    """A reason points at the code it was read from (``file.py:line``) or says what the class is."""
    import re

    _, unsupported, out_of_scope = _named()
    unplaced = [
        name for name, reason in unsupported.items() if name != "HiDream" and not re.search(r"\.py:\d+", reason)
    ]
    assert not unplaced, unplaced
    assert all(what.strip() for what in out_of_scope.values())
