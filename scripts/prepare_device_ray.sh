#!/usr/bin/env bash
# Packs ray (for the Ray runner, bcg_client/on_ray) for the GPU machine, which has no registry and
# lacks ray, into .carryray/ray_site.tar.xz; scripts/gpu_suite.sh unpacks every .carryray/*.tar.xz
# onto PYTHONPATH (carry ".carryray" in the device call):
#
#   bash scripts/prepare_device_ray.sh          # cpython 3.12 (the device's python3); PY=3.11 for another
#
# ray's wheel is 79 MB (over the 64 MiB a device call may carry); what the runner never loads is
# left out: the Java jars, the dashboard's web build, and the libraries on top of Ray core (rllib,
# data, serve, train, tune, llm). With jsonschema and its needs (the device image lacks them; ray's
# other needs, click, filelock, msgpack, packaging, protobuf, pyyaml and requests, are there) it
# packs to about 28 MB. The same trim runs the runner's tests here (tests/unit/test_bcg_ray.py).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-3.12}
OUT_DIR=${OUT_DIR:-.carryray}
pkgs=(ray==2.60.0 jsonschema==4.26.0 jsonschema-specifications==2025.9.1 referencing==0.37.0 rpds-py==2026.9.1)
cache=$PWD/.wheelcache/cp${PY//./}
mkdir -p "$cache" "$OUT_DIR"
exclude=$(git rev-parse --git-path info/exclude)  # a worktree's too
mkdir -p "$(dirname "$exclude")"
for p in /.wheelcache/ "/${OUT_DIR#./}/"; do grep -qx "$p" "$exclude" 2>/dev/null || echo "$p" >>"$exclude"; done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PY" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$cache" "${pkgs[@]}"
site=$(mktemp -d)
for spec in "${pkgs[@]}"; do
  name=${spec%%==*} version=${spec#*==}
  python3 -m zipfile -e "$(ls "$cache"/"${name//-/_}"-"$version"-*.whl | head -1)" "$site"
done
rm -rf "$site"/ray/jars "$site"/ray/dashboard/client/build "$site"/ray/{rllib,data,serve,train,tune,llm,cpp}
find "$site" -name __pycache__ -prune -exec rm -rf {} +
chmod -R u+rwX,go+rX "$site" && chmod +x "$site"/ray/core/src/ray/gcs/gcs_server "$site"/ray/core/src/ray/raylet/raylet
tar -C "$site" -cJf "$OUT_DIR/ray_site.tar.xz" .
rm -rf "$site"
echo "$OUT_DIR/ray_site.tar.xz: $(du -sb --apparent-size "$OUT_DIR/ray_site.tar.xz" | cut -f1) bytes (${pkgs[*]})"
