"""Export one commit of a bare git repository into a folder: the hosts and packs the tests load.

    python scripts/export_tree.py /work/.mirror/yzkee+ComfyUI/repo HEAD .comfyui/c033
    python scripts/export_tree.py /work/.mirror/pollockjj+ComfyUI/repo HEAD .comfyui/c080
    python scripts/export_tree.py /work/.mirror/city96+ComfyUI-GGUF/repo 795e451 .comfyui/packs/ComfyUI-GGUF
    python scripts/export_tree.py /work/.mirror/kijai+ComfyUI-KJNodes/repo 3f20054 .comfyui/packs/ComfyUI-KJNodes

A snapshot may lack its largest blobs (``git archive`` then fails): those files and symbolic links
are skipped and counted. Tools only; nothing of ComfyUI or a pack is committed.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys


def export(git_dir: str, rev: str, dest: pathlib.Path) -> tuple[int, list[str]]:
    """Write every regular file of ``rev`` under ``dest``: (files written, paths skipped)."""
    git = ["git", f"--git-dir={git_dir}"]
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", rev], check=True, capture_output=True).stdout
    written, skipped = 0, []
    for entry in filter(None, listing.split(b"\0")):
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.decode().split()
        name = path.decode()
        if kind != "blob" or mode == "120000":  # submodules and symbolic links
            skipped.append(name)
            continue
        blob = subprocess.run([*git, "cat-file", "blob", sha], capture_output=True)
        if blob.returncode != 0:  # absent from the snapshot
            skipped.append(name)
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob.stdout)
        if mode == "100755":
            target.chmod(0o755)
        written += 1
    return written, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir", help="a bare repository (fetch's .../repo)")
    parser.add_argument("rev", help="a commit, tag or HEAD")
    parser.add_argument("dest", type=pathlib.Path, help="the folder to write (created)")
    args = parser.parse_args(argv)
    written, skipped = export(args.git_dir, args.rev, args.dest)
    print(f"{args.dest}: {written} files, {len(skipped)} skipped" + (f" (first: {skipped[0]})" if skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
