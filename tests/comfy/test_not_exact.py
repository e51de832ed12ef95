"""comfy layer: ``bench.not_exact``'s call-by-call comparison of two eager samples, on a real
depth-1 model on the CPU (where eager repeats itself, so every call must compare equal) and with
one recorded input changed (the comparison must name that call)."""

import pytest
import torch

from bench import not_exact, synthetic

pytestmark = pytest.mark.comfy
FAMILY = "zimage"


def test_two_eager_samples_compare_call_by_call():
    model = synthetic.load_model(FAMILY, depth=1, seed=0)
    with torch.no_grad():
        first, second = (not_exact.record_calls(model, FAMILY, 64, 64, None, steps=3, modules=True) for _ in range(2))
    found = not_exact.compare_runs(first, second)
    assert found["calls"] == (6, 6), found  # cfg 2.5: cond and uncond apart (the recipe's prompt lengths differ)
    assert found["first_input_differing"] is None and found["first_output_differing"] is None, found
    assert found["per_call"] == [(0.0, 0.0)] * 6
    assert all(len(call[2]) > 10 for call in first), "every call keeps a digest per submodule"
    assert not_exact.rerun_call(model, first[3]) == [0.0, 0.0]  # a call repeats itself on its own inputs

    (args, kwargs), output, digests = second[1]
    x = args[0] if args else kwargs["x"]
    x[0, 0, 0, 0] += 1.0  # the second run's second call saw another latent
    found = not_exact.compare_runs(first, second)
    assert found["first_input_differing"] == (1, 1.0), found
    assert found["first_output_differing"] is None, found  # no call with equal inputs differs

    second[1] = ((args, kwargs), output, digests)
    first_out = first[2][1]
    digests = list(first[2][2])
    name, digest = digests[5]
    digests[5] = (name, digest + 1)  # ... and the sixth module to return is the first that parted
    second[2] = (first[2][0], first_out + 1, digests)  # equal inputs, another output: the DiT's own doing
    found = not_exact.compare_runs(first, second)
    assert found["first_output_differing"][0] == 2, found
    assert found["first_module_differing"] == name, found
