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


@pytest.mark.parametrize("family", ["zimage", "sd3"])
def test_the_first_call_is_recorded_where_bcg_sees_it_and_its_plain_forward_repeats_it(family):
    """SD3's ``MMDiT`` runs no DIFFUSION_MODEL wrapper (BCG patches its ``forward``): a recorder that
    only wraps would see no call there. The recorded call, run again through ``plain_forward``,
    gives the output the sampler's call gave (the full-size GPU test's eager probe rests on it)."""
    model = synthetic.load_model(family, depth=1, seed=0)
    outputs = []

    def keep(executor, *args, **kwargs):
        outputs.append(executor(*args, **kwargs))
        return outputs[-1]

    patched = model.clone()
    not_exact.watch_dit_calls(patched, "test_not_exact", keep)
    with torch.no_grad():
        synthetic.sample(patched, family, 64, 64, 1, 2.5, *_conds(family), seed=7)
        dm, args, kwargs = not_exact.record_first_call(model, family, 64, 64, None, batch=2)
        again = not_exact.plain_forward(dm)(*args, **kwargs)
    assert len(outputs) == 1 and "x" in kwargs, (len(outputs), sorted(kwargs))  # cfg 2.5: cond and uncond in one call
    assert torch.equal(again, outputs[0])


def _conds(family):
    lengths = synthetic.family_info(family).prompt_lengths
    return [synthetic.make_conditioning(family, lengths[0], seed=seed) for seed in (1, 2)]
