"""The cuDNN attention probe (``bench.sdpa_probe``) says plainly what it needs and what it takes."""

import pytest
import torch

from bench import sdpa_probe

pytestmark = pytest.mark.unit


@pytest.mark.skipif(torch.cuda.is_available(), reason="the no-CUDA answer; on a GPU the probe runs")
def test_without_cuda_it_says_it_needs_one_and_probes_nothing(capsys):
    assert sdpa_probe.main(["--repeats", "2"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["1,2", "2,32,0,64", "2,x,1,64"])
def test_a_shape_that_is_not_four_positive_sizes_is_refused_naming_the_field(bad, capsys):
    with pytest.raises(SystemExit):
        sdpa_probe.main(["--q", bad])
    err = capsys.readouterr().err
    assert "argument --q" in err and "batch,heads,tokens,head_dim" in err, err


def test_an_unknown_variant_is_refused_naming_the_field_before_anything_runs(capsys):
    with pytest.raises(SystemExit):
        sdpa_probe.main(["--variants", "none,graph_everything"])
    err = capsys.readouterr().err
    assert "--variants: graph_everything not one of" in err, err


@pytest.mark.parametrize("bad", ["0", "-3", "many"])
def test_a_repeat_count_below_one_is_refused_naming_the_field(bad, capsys):
    with pytest.raises(SystemExit):
        sdpa_probe.main(["--repeats", bad])
    assert "--repeats" in capsys.readouterr().err
