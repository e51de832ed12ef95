"""scripts/export_tree.py: a commit of a bare repository becomes a folder, symbolic links and blobs
the snapshot lacks skipped and counted (the hosts and packs the comfy layer loads)."""

import importlib.util
import os
import pathlib
import shutil
import subprocess

import pytest

pytestmark = [
    pytest.mark.unit,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git on PATH"),
]
ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_script():
    spec = importlib.util.spec_from_file_location("export_tree", ROOT / "scripts" / "export_tree.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git(work, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=work, env=env, check=True, capture_output=True, text=True).stdout


def test_a_commit_is_written_whole_and_what_it_cannot_write_is_named(tmp_path):
    work = tmp_path / "work"
    (work / "comfy" / "ldm").mkdir(parents=True)
    (work / "main.py").write_text("print('main')\n")
    (work / "comfy" / "ldm" / "model.py").write_text("x = 1\n")
    (work / "run.sh").write_text("#!/bin/sh\n")
    (work / "run.sh").chmod(0o755)
    (work / "big.bin").write_bytes(b"\0" * 64)
    (work / "link").symlink_to("main.py")
    git(work, "init", "-q")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "c")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    missing = git(work, "rev-parse", "HEAD:big.bin").strip()
    (bare / "objects" / missing[:2] / missing[2:]).unlink()  # a snapshot without its largest blob

    written, skipped = load_script().export(str(bare), "HEAD", tmp_path / "out")

    out = tmp_path / "out"
    assert written == 3 and sorted(skipped) == ["big.bin", "link"], (written, skipped)
    assert (out / "main.py").read_text() == "print('main')\n"
    assert (out / "comfy" / "ldm" / "model.py").read_text() == "x = 1\n"
    assert os.access(out / "run.sh", os.X_OK) and not os.access(out / "main.py", os.X_OK)
    assert not (out / "big.bin").exists() and not (out / "link").exists()
