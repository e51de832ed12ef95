"""unit layer: ``bench.not_exact`` records each attention call beside the module digests, named by
the backend torch picks and the operands' layout, so a run that parts at an attention says which
kernel served it (plain torch: ComfyUI's attention on the CPU does not go through SDPA)."""

import pytest
import torch
import torch.nn.functional as F

from bench import not_exact

pytestmark = pytest.mark.unit


def test_each_attention_call_is_two_entries_named_by_backend_and_layout():
    q = torch.randn(1, 2, 4, 8)
    kv = torch.randn(1, 4, 2, 8).transpose(1, 2)  # a (b, s, h, d) projection seen as (b, h, s, d)
    digests, original = [], F.scaled_dot_product_attention
    with not_exact._sdpa_digests(digests):
        assert F.scaled_dot_product_attention is not original
        out = F.scaled_dot_product_attention(q, kv, kv)
    assert F.scaled_dot_product_attention is original  # restored after
    (operands_name, operands), (name, output) = digests
    assert operands_name == f"{name} operands"
    assert name.startswith("sdpa[") and "unknown" not in name, name
    assert f"k={(1, 2, 4, 8)}/{kv.stride()}@" in name, name
    assert torch.equal(output, not_exact._digest(out))
    assert torch.equal(operands, not_exact._digest((q, kv, kv)))


def test_the_first_parting_entry_is_named_with_the_second_runs_name_where_it_differs():
    same = torch.zeros(2, dtype=torch.float64)
    call = lambda entries: (((), {}), torch.zeros(1), entries)  # noqa: E731
    first = [call([("blocks.0", same), ("sdpa[CUDNN_ATTENTION] q=a", same)])]
    second = [call([("blocks.0", same), ("sdpa[FLASH_ATTENTION] q=a", same + 1)])]
    second[0] = (second[0][0], torch.ones(1), second[0][2])  # equal inputs, another output
    found = not_exact.compare_runs(first, second)
    assert found["first_module_differing"] == "sdpa[CUDNN_ATTENTION] q=a", found
    assert found["second_run_names_it"] == "sdpa[FLASH_ATTENTION] q=a", found
