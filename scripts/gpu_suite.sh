#!/usr/bin/env bash
# The whole GPU check in one call, for the H200 (or any CUDA machine with ComfyUI):
#   1. the gpu layer: runtime tests on real CUDA graphs, and the comfy tests on CUDA, full-size
#      models included (bit-exact BCG vs eager sampling);
#   2. the benchmark (eager vs BCG vs torch.compile) at 512² for the three families;
# then a short table. Details (logs, JSON) go to $OUT (default ./bench_out).
#
#   bash scripts/gpu_suite.sh                 # tests + quick benchmark (fits in 10 minutes)
#   bash scripts/gpu_suite.sh tests           # tests only (TESTS="paths" to pick some)
#   bash scripts/gpu_suite.sh bench 1024x1024 # benchmark only, at the given resolutions
#   bash scripts/gpu_suite.sh e2e             # e2e layer on CUDA: real ComfyUI servers, soak, /free, /interrupt
#
# ComfyUI comes from $COMFYUI_PATH, else ./.comfyui. Wheels in ./.whl and unpacked packages in
# ./.whl_unpacked (both git-ignored) are installed/added first for machines without a registry;
# ./.whl_e2e/*.whl (ComfyUI's server and node-API requirements) are installed and
# ./.whl_e2e/unpacked (its frontend package) added when present. Its artifacts: $OUT/e2e/e2e_summary.json (soak
# counts, memory curve, /free, /interrupt and default-allocator outcomes), the server log, and
# everything else packed into $OUT/e2e/artifacts.tar.gz. BCG_SOAK_PROMPTS sets the soak's size.
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
resolutions=${2:-512x512}
OUT=${OUT:-$PWD/bench_out}
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/bcg_site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/bcg_site${PYTHONPATH:+:$PYTHONPATH}
fi
[ -d .whl_unpacked ] && export PYTHONPATH=$PWD/.whl_unpacked:${PYTHONPATH:-}
# ComfyUI's server and node-API requirements (PyAV, ...): with them the node-level comfy tests run
# on CUDA too, and mode e2e can start servers.
if compgen -G ".whl_e2e/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/bcg_e2e_site .whl_e2e/*.whl || exit 1
  export PYTHONPATH=/tmp/bcg_e2e_site:${PYTHONPATH:-}
fi
[ -d .whl_e2e/unpacked ] && export PYTHONPATH=$PWD/.whl_e2e/unpacked:${PYTHONPATH:-}
export COMFYUI_PATH=${COMFYUI_PATH:-$PWD/.comfyui} BCG_COMFY_TEST_CPU=0 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -c "import torch, comfy_kitchen; print('torch', torch.__version__, 'comfy-kitchen', getattr(comfy_kitchen, '__version__', '?'))" 2>&1 | tee -a "$OUT/gpu.txt"

status=0
if [ "$what" = e2e ]; then
  export BCG_ARTIFACTS=$OUT/e2e
  rm -rf "$BCG_ARTIFACTS" && mkdir -p "$BCG_ARTIFACTS"
  python3 -m pytest tests/e2e -m e2e -q -rs -p no:cacheprovider 2>&1 | tee "$OUT/e2e_tests.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  # Few files come back from the GPU machine: keep the summary and the server log, pack the rest.
  (cd "$BCG_ARTIFACTS" && mapfile -t rest < <(ls -A | grep -vx -e e2e_summary.json -e comfyui_server.log) \
    && if [ "${#rest[@]}" -gt 0 ]; then tar czf artifacts.tar.gz "${rest[@]}" && rm -rf "${rest[@]}"; fi)
  echo
  echo "== e2e summary =="
  grep -E "passed|failed|error" "$OUT/e2e_tests.log" | tail -1
  python3 scripts/e2e_summary.py "$BCG_ARTIFACTS/e2e_summary.json"
  exit $status
fi
if [ "$what" = all ] || [ "$what" = tests ]; then
  # Everything but e2e (servers, a 200-prompt soak: its own mode, above); the comfy layer's node
  # tests run on CUDA with real graphs where PyAV is installed, and skip saying so where not.
  python3 -m pytest ${TESTS:-tests} -m "(gpu or comfy) and not e2e" -p no:cacheprovider -q -rs 2>&1 | tee "$OUT/gpu_tests.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
  for family in zimage flux qwen_image; do
    # Quick by default so tests + benchmark fit in 10 minutes; BENCHMARKS.md runs use
    # REPEATS=3 MODES=eager,bcg,bcg-full,compile-cudagraphs.
    python3 -m bcg_runtime.bench --family "$family" --resolutions "$resolutions" --repeats "${REPEATS:-2}" \
      --modes "${MODES:-eager,bcg-full,bcg}" --json "$OUT/bench_${family}.json" 2>&1 \
      | tee "$OUT/bench_${family}.log" | grep -E "^\[BCG\] (replayed|captured)|error|Error" | tail -5
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  done
fi
echo
echo "== summary =="
grep -E "passed|failed" "$OUT/gpu_tests.log" 2>/dev/null | tail -1
python3 -m bcg_runtime.bench_table "$OUT"/bench_*.json 2>/dev/null
exit $status
