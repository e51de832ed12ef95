"""The bookkeeping BCG leaves out of the key, against ComfyUI's own DiT code.

``host_facts.BOOKKEEPING_KEYS`` says ComfyUI's forwards hand those entries only to patches, hooks and
wrappers. Each capture checks that claim on the run it makes (``options.WatchedOptions``); this test
checks it on the source, for what a run cannot show: a read from a copy the watch does not follow
(``{**transformer_options}``) or on a path no capture took. Every line under ``comfy/ldm`` that reads
an entry the DiT does not write itself must be listed in ``host_facts.KNOWN_BOOKKEEPING_READS`` with
what keeps it from a graph; a ComfyUI with another such line fails here before any graph serves it.
"""

import pathlib
import re

import pytest
from bcg_testing import comfyui_root

from bcg_runtime.comfy import host_facts
from bcg_runtime.comfy.host_version import running_comfyui_version

pytestmark = pytest.mark.comfy

#: Entries from outside the forward: a read of one is a read of the caller's value.
FROM_OUTSIDE = host_facts.BOOKKEEPING_KEYS - host_facts.WRITTEN_BY_THE_DIT
_LITERAL = re.compile(r"""(["'])(%s)\1""" % "|".join(sorted(FROM_OUTSIDE)))
#: What follows a literal that is not a read: an assignment to it, or a dict display's key.
_NOT_A_READ = re.compile(r"\]\s*=(?!=)|\s*:")


def bookkeeping_reads(root: pathlib.Path) -> set[tuple[str, str]]:
    """``(path, stripped line)`` of every line under ``root/comfy/ldm`` that reads an entry of
    :data:`FROM_OUTSIDE` by its literal name (comments left out)."""
    found = set()
    for path in sorted((root / "comfy" / "ldm").rglob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            code = line.split("#", 1)[0]
            if any(not _NOT_A_READ.match(code[m.end() :]) for m in _LITERAL.finditer(code)):
                found.add((path.relative_to(root).as_posix(), line.strip()))
    return found


def test_the_scan_finds_reads_and_passes_writes_by(tmp_path):
    """The scan's own check, on lines written as ComfyUI writes them (the last as a later
    MiniMax H3 does, Comfy-Org/ComfyUI@2c64d4a)."""
    (tmp_path / "comfy" / "ldm").mkdir(parents=True)
    (tmp_path / "comfy" / "ldm" / "m.py").write_text(
        'a = transformer_options.get("cond_or_uncond")\n'
        "b = {**transformer_options}['sample_sigmas']\n"
        'transformer_options["sigmas"] = s\n'
        'c = {"uuids": 1}\n'
        'd = transformer_options["block_index"]\n'
        '# e = transformer_options["sigmas"]\n'
        'v, a = self.final_layer(h, sigma_v, transformer_options.get("sample_sigmas"), (shift_v, shift_a))\n',
        encoding="utf-8",
    )
    assert {line for _, line in bookkeeping_reads(tmp_path)} == {
        'a = transformer_options.get("cond_or_uncond")',
        "b = {**transformer_options}['sample_sigmas']",
        'v, a = self.final_layer(h, sigma_v, transformer_options.get("sample_sigmas"), (shift_v, shift_a))',
    }


def test_every_read_of_outside_bookkeeping_in_comfys_dit_code_is_listed_with_what_keeps_it_from_a_graph():
    found = bookkeeping_reads(comfyui_root())
    listed = set(host_facts.KNOWN_BOOKKEEPING_READS)
    assert found <= listed, (
        "ComfyUI's DiT code reads bookkeeping that BCG leaves out of the key on lines nobody looked at: "
        "list each in host_facts.KNOWN_BOOKKEEPING_READS with what keeps it from a graph (a patch, a refused "
        f"family), or key or refuse that entry: {sorted(found - listed)}"
    )
    if running_comfyui_version() == "0.33.0":  # the main target holds every listed line: none is stale
        assert found == listed, sorted(listed - found)
