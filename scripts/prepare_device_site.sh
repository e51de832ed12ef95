#!/usr/bin/env bash
# Packs the Python packages that the GPU machine's image lacks for one ComfyUI host into one
# compressed site folder, <OUT_DIR>/site.tar.xz, which scripts/gpu_suite.sh unpacks there
# (BCG_HOST=<OUT_DIR>, or BCG_WHEELS=<OUT_DIR>):
#
#   bash scripts/prepare_device_site.sh 033            # ComfyUI 0.33.0 -> .carry033/site.tar.xz
#   bash scripts/prepare_device_site.sh 080            # ComfyUI 0.8.0  -> .carry080/site.tar.xz
#   PY=3.11 FORMAT=dir OUT_DIR=/tmp/site033_py311 bash scripts/prepare_device_site.sh 033
#        # the same set for this machine's python, unpacked in <OUT_DIR>/site/ (a local check)
#   KORNIA=0 ...                                       # without kornia + kornia-rs (-4.8 MB packed)
#   bash scripts/prepare_device_site.sh 033n           # the assembled "newer" host (docs/compatibility.md):
#        # .carry033n/ = the comfy-aimdo 0.6.0 wheel (0.4 MB) and a file `base` naming .carry033, whose
#        # packages gpu_suite.sh takes first; put the assembled ComfyUI tree beside it as comfyui.tar.xz
#        # (docs/compatibility.md says what it holds; this repository builds none of it). Carry
#        # [".carry033/site.tar.xz", ".carry033n"]: ~54 + ~2.7 MiB, under the device's 64 MiB.
#
# The same folder is meant to hold the host's ComfyUI tree as comfyui.tar.xz (or ComfyUI/), so that
# one carried path serves one host (gpu_suite.sh finds both there).
#
# What is in it: the packages of that ComfyUI's requirements.txt (at the versions pinned there, else
# the versions its CPU test venv resolved) that the device image (KINDS.md: python 3.12, torch
# 2.11.0+cu130, numpy, transformers, aiohttp, ...) does not hold, plus their own missing needs.
# Left out on purpose, with what that changes:
#   - comfy-kitchen's backends/hip (ROCm kernels, 59 MB; the device is NVIDIA): its cuda backend stays;
#   - comfyui-frontend-package (85 MB of web UI): replaced by a stub package with a one-page
#     static/index.html, so `python main.py` starts and the HTTP API works; no browser test there;
#   - comfyui-workflow-templates and comfyui-embedded-docs (ComfyUI logs that they are missing and
#     serves no templates/docs), comfy-angle and PyOpenGL (requirements.txt's "non essential"
#     GLSL node, nodes_glsl.py, logs an import error at start).
# Wheels are fetched with the device README's `pip download` (no deps, manylinux x86_64, cpython
# $PY) into .wheelcache/cp<PY>/ (git-ignored), installed into a temporary site folder with pip for
# that platform, and packed with xz (kitchen's 176 MB CUDA library packs to ~21 MB; as a zip
# wheel without hip it would be ~41 MB). The folder also gets MANIFEST.txt (name==version of each
# package) and SIZES.txt (unpacked bytes per top-level entry).
set -euo pipefail
cd "$(dirname "$0")/.."
host=${1:?usage: prepare_device_site.sh 033|080|033n}
PY=${PY:-3.12}
OUT_DIR=${OUT_DIR:-.carry$host}
KORNIA=${KORNIA:-1}
FORMAT=${FORMAT:-xz}
pyver=${PY//./}
exclude=$(git rev-parse --git-path info/exclude 2>/dev/null || echo .git/info/exclude)  # also in a worktree
mkdir -p "$(dirname "$exclude")"

common=(torchsde==0.2.6 trampoline==0.1.2 alembic==1.20.1 mako==1.4.3 sqlalchemy==2.1.9 av==18.1.0
        pydantic==2.14.4 pydantic-core==2.50.5 pydantic-settings==2.16.3 annotated-types==0.8.0
        typing-inspection==0.4.5 python-dotenv==1.2.4 spandrel==0.4.2)
[ "$KORNIA" = 1 ] && common+=(kornia==0.9.0 kornia-rs==0.2.0)
if [ "$host" = 033n ]; then  # a small folder over .carry033: only the newer comfy-aimdo
  mkdir -p "$OUT_DIR"
  rm -f "$OUT_DIR"/*.whl
  python3 -m pip download --no-deps --only-binary=:all: --python-version "$PY" --implementation cp \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$OUT_DIR" comfy-aimdo==0.6.0 >/dev/null
  echo "${BASE_DIR:-.carry033}" >"$OUT_DIR/base"
  echo "comfy-aimdo==0.6.0 (over the packages of $(cat "$OUT_DIR/base"))" >"$OUT_DIR/MANIFEST.txt"
  case "$OUT_DIR" in /*) ;; *) grep -qx "/${OUT_DIR#./}/" "$exclude" 2>/dev/null || echo "/${OUT_DIR#./}/" >>"$exclude" ;; esac
  echo "$OUT_DIR: $(ls "$OUT_DIR"/*.whl), base $(cat "$OUT_DIR/base"); add the assembled ComfyUI tree as $OUT_DIR/comfyui.tar.xz"
  exit 0
fi
case "$host" in
  033) pkgs=("${common[@]}" comfy-kitchen==0.2.31 comfy-aimdo==0.4.13 simpleeval==1.0.8 blake3==1.0.11) ;;
  080) pkgs=("${common[@]}" comfy-kitchen==0.2.40) ;;
  *) echo "unknown host '$host' (033, 080 or 033n)" >&2; exit 2 ;;
esac

platform=(--python-version "$PY" --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
          --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
cache=.wheelcache/cp$pyver
mkdir -p "$cache"
grep -qx '/.wheelcache/' "$exclude" 2>/dev/null || echo /.wheelcache/ >>"$exclude"
case "$OUT_DIR" in /*) ;; *) grep -qx "/${OUT_DIR#./}/" "$exclude" 2>/dev/null || echo "/${OUT_DIR#./}/" >>"$exclude" ;; esac

wheels=()
for spec in "${pkgs[@]}"; do
  name=${spec%%==*} version=${spec#*==}
  file=$(ls "$cache"/"${name//-/_}"-"$version"-*.whl 2>/dev/null | head -1 || true)
  if [ -z "$file" ]; then
    python3 -m pip download --no-deps --only-binary=:all: "${platform[@]}" -d "$cache" "$spec" >/dev/null
    file=$(ls "$cache"/"${name//-/_}"-"$version"-*.whl | head -1)
  fi
  wheels+=("$file")
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
site=$work/site
python3 -m pip install -q --no-deps --no-compile --no-cache-dir --no-index --only-binary=:all: "${platform[@]}" \
  --target "$site" "${wheels[@]}"
rm -rf "$site/bin" "$site/comfy_kitchen/backends/hip"
find "$site" -name __pycache__ -type d -prune -exec rm -rf {} +

# The frontend stub (ours): ComfyUI exits at start without comfyui_frontend_package.
mkdir -p "$site/comfyui_frontend_package/static"
cat >"$site/comfyui_frontend_package/__init__.py" <<'EOF'
"""Stand-in for comfyui-frontend-package on machines where the 85 MB web UI is not carried
(ComfyUI-BCG's scripts/prepare_device_site.sh): ComfyUI's server starts and its HTTP API works;
the page below is all the UI there is."""
EOF
cat >"$site/comfyui_frontend_package/static/index.html" <<'EOF'
<!doctype html><title>ComfyUI (no frontend)</title>
<p>The ComfyUI frontend package is not installed on this machine (a stand-in from ComfyUI-BCG's
scripts/prepare_device_site.sh); the HTTP API works.</p>
EOF

mkdir -p "$OUT_DIR"
rm -rf "$OUT_DIR"/site.tar.xz "$OUT_DIR"/site "$OUT_DIR"/*.whl
(cd "$site" && ls -d *.dist-info | sed -E 's/\.dist-info$//; s/-([^-]+)$/==\1/' | sort) >"$OUT_DIR/MANIFEST.txt"
echo "comfyui_frontend_package (stub, see scripts/prepare_device_site.sh)" >>"$OUT_DIR/MANIFEST.txt"
(cd "$site" && du -s --apparent-size -B1 -- * | sort -rn) >"$OUT_DIR/SIZES.txt"
unpacked=$(du -sb --apparent-size "$site" | cut -f1)
if [ "$FORMAT" = dir ]; then
  mv "$site" "$OUT_DIR/site"
  echo "$OUT_DIR/site: $unpacked bytes, $(grep -c == "$OUT_DIR/MANIFEST.txt") packages + frontend stub"
else
  XZ_OPT=${XZ_OPT:--9 -T2} tar -C "$site" -cJf "$OUT_DIR/site.tar.xz" .
  echo "$OUT_DIR/site.tar.xz: $(du -sb --apparent-size "$OUT_DIR/site.tar.xz" | cut -f1) bytes packed ($unpacked unpacked), $(grep -c == "$OUT_DIR/MANIFEST.txt") packages + frontend stub"
fi
