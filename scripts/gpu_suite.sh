#!/usr/bin/env bash
# The whole GPU check in one call, for the H200 (or any CUDA machine with ComfyUI). Stages:
#   tests    the gpu layer (runtime tests on real CUDA graphs) and the comfy tests on CUDA, full-size
#            models included (bit-exact BCG vs eager sampling);
#   noflags  ComfyUI started exactly as users start it, `python main.py` with no flags at all (its
#            allocator default, Dynamic VRAM where that ComfyUI has it), the pack in its own
#            custom_nodes, synthetic models in its models folder (scripts/noflags_check.py; families
#            NOFLAGS_FAMILIES, default "zimage flux qwen_image"): per family BCG prompts and their
#            eager twins compared bit for bit, what BCG did and what the Dynamic VRAM twin cost
#            (noflags.json);
#   e2e      the e2e layer on CUDA: real ComfyUI servers, soak, /free, /interrupt, default allocator;
#   bench    the benchmark (eager vs BCG vs torch.compile) for each family (BENCH_FAMILIES;
#            BENCH_ARGS_<family>="--resolutions 832x480x33 --steps 8" adds that family's own arguments;
#            an entry NAME=FAMILY is its own process with BENCH_ARGS_<NAME>, so one call can measure a
#            family twice: BENCH_FAMILIES="flux flux_fp8=flux" BENCH_ARGS_flux_fp8="--weight-dtype comfy_quant_fp8");
#   ray      the Ray runner (scripts/bcg_ray.py) against one stock server (`python main.py`, no flags,
#            synthetic Z-Image of BCG_E2E_DEPTH blocks): RAY_PROMPTS prompts (20) at RAY_SIZE (512x512),
#            RAY_STEPS steps (8), the eager twin then BCG, per-prompt times (scripts/ray_gpu_check.py;
#            ray_check.json); needs ray: carry .carryray from scripts/prepare_device_ray.sh;
#   batch    the batch benchmark (bench.batch): prompts of varied lengths over 3 sizes,
#            no warm-up, BCG vs eager per job; BATCH_RUNS lists family:prompts[:seeds[:depth[:jobs]]]
#            (default "zimage:100 qwen_image:100"; a depth reduces the model to fit the time; jobs
#            START-STOP runs that part of the batch, e.g. "qwen_image:100:1::0-50" then
#            "qwen_image:100:1::50-100" in the next call, added up by `python -m bench.batch --merge`);
#            BATCH_PROFILE=1: a cProfile of the first BCG job (batch_<run>_first.prof.txt);
#   serverbatch the batch benchmark's job on a stock server, prompt by prompt (python -m bench.server_batch;
#            SERVER_BATCH_ARGS, default "--model zimage --prompts 100"): server_batch.json, its line
#            into the summary;
#   server   the server benchmark (python -m bench.server): a stock `python main.py` (no flags) with
#            synthetic full-size models, the example workflow eager, with BCG Apply, with the warm-up
#            node and in mode fast, N prompts each: per-prompt wall / denoise / outside times,
#            first-prompt cost, memory, bit-equality to the eager twin; SERVER_ARGS adds its arguments
#            (default: Z-Image-Turbo at 512x512,1024x1024, 3 prompts; e.g. SERVER_ARGS="--models
#            flux,flux:fp8_scaled --sizes 1024x1024 --prompts 10"): server.json, its markdown table
#            into the summary;
#   not_exact why a capture is not bit-equal (python -m bench.not_exact): NOT_EXACT_ARGS, one argument
#            list per run separated by ';' (default "--family ltxav --size 512x512x1 --batch 2");
#   fusion   which work of FLUX.1 (bf16, comfy_quant fp8), Qwen-Image and Z-Image can run fused by
#            inductor and still equal eager bit for bit, and the GPU time it would save: whole blocks
#            first (python -m bench.fusion_blocks; FUSION_BLOCKS_ARGS), then chain by chain
#            (python -m bench.fusion_map; FUSION_ARGS), at the first resolution's side:
#            fusion_blocks.json and fusion_map.json, their tables into the summary;
#   compiler BCG's two policies for ComfyUI's model compiler (0.34+) against eager, with the real
#            comfy-aimdo 0.6.0 malloc graph around the DiT (bench.compiler; COMPILER_ARGS
#            adds its arguments, default "--family flux --depth 2 --steps 8"): its table goes into
#            the summary (a host with comfy-aimdo 0.6.0: HOSTS=.carry033n).
# A short table comes last (also $OUT/summary.txt).
#
#   bash scripts/gpu_suite.sh                 # = all: tests + quick benchmark
#   bash scripts/gpu_suite.sh full            # tests, noflags, e2e, bench (each within the time budget)
#   bash scripts/gpu_suite.sh tests           # tests only (TESTS="paths" to pick some; BCG_GPU_FAMILIES="sd3 wan"
#                                             # limits the full-size test to those families, BCG_GPU_FAMILY_PART=k/n
#                                             # to lane k of n's share; TEST_LANES runs
#                                             # several pytest processes on the GPU at once: see stage_test_lanes)
#   bash scripts/gpu_suite.sh tests,noflags   # any comma list of stages
#   bash scripts/gpu_suite.sh bench 1024x1024 # benchmark only, at the given resolutions
#   bash scripts/gpu_suite.sh e2e             # e2e layer only (E2E_TESTS=<files> for some of it)
#   bash scripts/gpu_suite.sh ray             # the Ray runner's per-prompt times, eager vs BCG
#   SERVER_ARGS="--models qwen_image" bash scripts/gpu_suite.sh server   # the server benchmark
#
# Which ComfyUI, with which Python packages (the device image lacks ComfyUI and some of its needs):
#   BCG_HOST=.carry033        a host folder: the ComfyUI tree as comfyui.tar.xz (unpacked under
#                             /tmp/bcg_hosts/<host>/) or ComfyUI/, and its packages as site.tar.xz
#                             (scripts/prepare_device_site.sh), site/, unpacked/ or *.whl;
#   HOSTS=".carry033 .carry080"  several host folders, one after the other ($OUT/<host>/ each);
#   COMFYUI_PATH=... BCG_WHEELS=dir  a ComfyUI tree and a packages folder given apart (when
#                             COMFYUI_PATH names a missing tree whose parent holds comfyui.tar.xz,
#                             it is unpacked there);
#   neither: ComfyUI from $COMFYUI_PATH, else ./.comfyui.
# A host folder may name another as its base (a file `base` holding that folder's path, e.g.
# .carry033n/base = ".carry033"; prepare_device_site.sh 033n writes it): the base's packages come
# first, the folder's own *.whl replace theirs (comfy-aimdo 0.6.0 over 0.4.13), and the folder's
# own ComfyUI tree is used when it has one, else the base's. Only the base's site.tar.xz needs to
# travel then (carry [".carry033/site.tar.xz", ".carry033n"]).
# Each host gets its own site folder (/tmp/bcg_site/<host>) first on PYTHONPATH. Always also, for
# machines without a registry: ./.whl/*.whl, ./.whl_unpacked, ./.whl_e2e/*.whl and
# ./.whl_e2e/unpacked when present (git-ignored).
#
# Time: the stages share SUITE_BUDGET_S seconds (default 570, under the device's 10-minute limit per
# command); each runs under `timeout` with what is left, a stage with under 30 s left is skipped, and
# the table says so. TESTS_BUDGET_S caps the tests stage (its lanes and TEST_ALONE together), so a
# benchmark after it in the same call keeps the rest: `TESTS_BUDGET_S=360 ... gpu_suite.sh tests,batch`.
# Output: $OUT (default ./bench_out; $OUT/<host>/ with several hosts) keeps
# summary.txt, gpu_tests.log, noflags.json, e2e_summary.json, ray_check.json and server.json; every other log, the benchmark JSON
# and the e2e artifacts are packed into details.tar.gz (the device returns at most 8 files).
# BCG_SOAK_PROMPTS sets the e2e soak's size.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
what=${1:-all}
resolutions=${2:-512x512}
OUT=${OUT:-$PWD/bench_out}
BUDGET=${SUITE_BUDGET_S:-570}
START=$SECONDS
mkdir -p "$OUT"
case "$what" in
  all) stages="tests bench" ;;
  full) stages="tests noflags e2e bench" ;;
  *) stages=${what//,/ } ;;
esac
for s in $stages; do
  case "$s" in tests | noflags | e2e | bench | batch | serverbatch | ray | server | compiler | not_exact | fusion) ;; *) echo "unknown stage '$s' (tests, noflags, e2e, bench, batch, serverbatch, ray, server, compiler, not_exact, fusion; all; full)" >&2; exit 2 ;; esac
done

# ------------------------------------------------------------------ packages every host shares
unpack() { # unpack <file.tar.xz> <dir>
  mkdir -p "$2"
  if command -v xz >/dev/null; then tar -xJf "$1" -C "$2"; else
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="data")' "$1" "$2"
  fi
}
pip_target() { # pip_target <dir> <wheels...>
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$@"
}
if compgen -G ".whl/*.whl" >/dev/null; then
  pip_target /tmp/bcg_site_common .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/bcg_site_common${PYTHONPATH:+:$PYTHONPATH}
fi
[ -d .whl_unpacked ] && export PYTHONPATH=$PWD/.whl_unpacked:${PYTHONPATH:-}
if compgen -G ".whl_e2e/*.whl" >/dev/null; then
  pip_target /tmp/bcg_e2e_site .whl_e2e/*.whl || exit 1
  export PYTHONPATH=/tmp/bcg_e2e_site:${PYTHONPATH:-}
fi
[ -d .whl_e2e/unpacked ] && export PYTHONPATH=$PWD/.whl_e2e/unpacked:${PYTHONPATH:-}
if compgen -G ".carryray/*.tar.xz" >/dev/null; then  # ray for the Ray runner (scripts/prepare_device_ray.sh)
  rm -rf /tmp/bcg_ray_site && for t in .carryray/*.tar.xz; do unpack "$t" /tmp/bcg_ray_site || exit 1; done
  export PYTHONPATH=/tmp/bcg_ray_site:${PYTHONPATH:-}
fi
export RAY_USAGE_STATS_ENABLED=0
export BCG_COMFY_TEST_CPU=0 PYTHONUNBUFFERED=1

# ------------------------------------------------------------------ per host
host_chain() { # host_chain <dir>: the folder's base (its file `base`, if any), then the folder
  local base
  if [ -f "$1/base" ]; then
    base=$(head -1 "$1/base")
    [ -d "$base" ] || { echo "host folder $1 names base '$base', which is missing (carry it too)" >&2; return 1; }
    echo "$base"
  fi
  echo "$1"
}
host_packages() { # host_packages <dir> <name>: this host's packages first on PYTHONPATH
  local dir=$1 site=/tmp/bcg_site/$2 t d w chain
  rm -rf "$site"
  chain=$(host_chain "$dir") || return 1
  for d in $chain; do
    for t in "$d"/*.tar.xz; do
      [ -f "$t" ] && [ "$(basename "$t")" != comfyui.tar.xz ] && { unpack "$t" "$site" || return 1; }
    done
    for w in "$d"/*.whl; do  # a folder's wheel replaces the same project from its base
      [ -f "$w" ] || continue
      rm -rf "$site/$(basename "$w" | cut -d- -f1)"-*.dist-info
      pip_target "$site" "$w" || return 1
    done
  done
  [ -d "$site" ] && export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
  for d in $chain; do
    [ -d "$d/site" ] && export PYTHONPATH=$(cd "$d/site" && pwd)${PYTHONPATH:+:$PYTHONPATH}
    [ -d "$d/unpacked" ] && export PYTHONPATH=$(cd "$d/unpacked" && pwd)${PYTHONPATH:+:$PYTHONPATH}
  done
  return 0
}
host_comfy() { # host_comfy <host dir or ""> <name>: prints the ComfyUI tree to use, unpacking it if needed
  local dir=$1 name=$2 path="" d
  if [ -n "${COMFYUI_PATH:-}" ] && [ "$NHOSTS" -le 1 ]; then
    path=$COMFYUI_PATH
    if [ ! -f "$path/main.py" ] && [ -f "$(dirname "$path")/comfyui.tar.xz" ]; then
      unpack "$(dirname "$path")/comfyui.tar.xz" "$(dirname "$path")" || return 1
    fi
  elif [ -n "$dir" ]; then
    for d in $(host_chain "$dir" | tac); do  # the folder's own tree first, then its base's
      if [ -f "$d/ComfyUI/main.py" ]; then
        path=$d/ComfyUI
      elif [ -f "$d/comfyui.tar.xz" ]; then
        rm -rf "/tmp/bcg_hosts/$name" && unpack "$d/comfyui.tar.xz" "/tmp/bcg_hosts/$name" || return 1
        path=/tmp/bcg_hosts/$name/ComfyUI
        # a tree packed from inside its folder (main.py at the top) is used where it lies
        [ -f "$path/main.py" ] || [ ! -f "/tmp/bcg_hosts/$name/main.py" ] || path=/tmp/bcg_hosts/$name
      fi
      [ -n "$path" ] && break
    done
  fi
  [ -n "$path" ] || path=$PWD/.comfyui
  (cd "$path" 2>/dev/null && pwd) || echo "$path"
}

left() { echo $((BUDGET - (SECONDS - START))); }
# tests_left: what the tests stage may still use (TESTS_BUDGET_S from the stage's start, within left)
tests_left() {
  local l cap
  l=$(left)
  if [ -n "${TESTS_BUDGET_S:-}" ]; then
    cap=$((TESTS_BUDGET_S - (SECONDS - TESTS_START)))
    [ "$cap" -lt "$l" ] && l=$cap
  fi
  echo "$l"
}
# row <stage> <result> <seconds>: one line of the host's table
row() { printf '%-9s %-8s %5ss  %s\n' "$HOST" "$1" "$3" "$2" >>"$OUT_H/summary.rows"; }
# timed <stage> <log> <cmd...>: runs cmd under what is left of the budget; sets RC, SECS
timed() {
  local stage=$1 log=$2 t0=$SECONDS budget
  shift 2
  budget=$(left)
  case "$stage" in tests | tests_alone) budget=$(tests_left) ;; esac
  if [ "$budget" -lt 30 ]; then RC=skip; SECS=0; echo "== $HOST $stage: skipped, ${budget}s of the time budget left"; return; fi
  echo "== $HOST $stage (up to ${budget}s) =="
  timeout -k 15 "$budget" "$@" >"$log" 2>&1
  RC=$?
  SECS=$((SECONDS - t0))
}
pytest_result() { # the last pytest count line of a log, or why there is none
  local line
  line=$(grep -E "^(=+ )?[0-9]+ (passed|failed|error|skipped|deselected)|no tests ran" "$1" | tail -1 | sed -E 's/^=+ //; s/ =+$//')
  case "$RC" in
    skip) echo "skipped: time budget spent" ;;
    124 | 137) echo "TIMEOUT after ${SECS}s${line:+ ($line)}" ;;
    *) echo "${line:-exit $RC, no pytest summary (see log)}" ;;
  esac
}
show_failures() { grep -E "^(FAILED|ERROR) " "$1" | head -25; }

GPU_PYTEST_ARGS=(-m "(gpu or comfy) and not e2e" -p no:cacheprovider -q -rfEs)

stage_tests() {
  TESTS_START=$SECONDS
  [ -n "${TEST_LANES:-}" ] && { stage_test_lanes; return; }
  timed tests "$OUT_H/gpu_tests.log" python3 -m pytest ${TESTS:-tests} "${GPU_PYTEST_ARGS[@]}"
  show_failures "$OUT_H/gpu_tests.log"
  row tests "$(pytest_result "$OUT_H/gpu_tests.log")" "$SECS"
  [ "$RC" = 0 ] || status=1
}

# TEST_LANES: pytest processes sharing the one GPU at once, separated by ';', each a list of
# assignments over this environment (TESTS=..., BCG_GPU_FAMILIES="...", PYTEST_ADDOPTS=...):
#   TEST_LANES='BCG_GPU_FAMILIES="anima flux2"; BCG_GPU_FAMILIES="lens omnigen2"; TESTS=tests/comfy/test_wan.py'
# Device time is the scarce thing and one process leaves the GPU idle while it builds models and
# captures, so lanes overlap that work; each process still compares BCG with its own eager, so
# exactness does not depend on what the others run. Lanes suit tests that build their models on the
# GPU directly (test_full_size_cuda.py) and the comfy files' small models; a test that loads through
# ComfyUI's model management sees the other lanes' memory as taken, so beside full-size lanes it
# loads partly (lowvram) and BCG turns itself off: keep those apart. One log (gpu_tests.log, lane by
# lane) and one table row per lane. TEST_ALONE: test paths run in one process once every lane has
# ended (a test that reads the device's free memory, test_memory_cuda.py), its own row; the lanes
# leave it TEST_ALONE_S seconds (150).
stage_test_lanes() {
  local budget t0=$SECONDS i=0 n spec lanes pids=()
  budget=$(tests_left)
  if [ -n "${TEST_ALONE:-}" ]; then  # the lanes leave TEST_ALONE its seconds, at most half the budget
    budget=$((budget - ${TEST_ALONE_S:-150})) && [ "$budget" -lt "$(($(tests_left) / 2))" ] && budget=$(($(tests_left) / 2))
  fi
  IFS=';' read -ra lanes <<<"$TEST_LANES"
  for spec in "${lanes[@]}"; do
    i=$((i + 1))
    echo "== $HOST tests lane $i (up to ${budget}s): $spec"
    (eval "export $spec" && timeout -k 15 "$budget" python3 -m pytest ${TESTS:-tests} "${GPU_PYTEST_ARGS[@]}") \
      >"$OUT_H/gpu_tests.lane$i.log" 2>&1 &
    pids+=($!)
  done
  : >"$OUT_H/gpu_tests.log"
  for n in $(seq 1 "$i"); do
    wait "${pids[$((n - 1))]}"
    RC=$? SECS=$((SECONDS - t0))
    { echo "######## lane $n: ${lanes[$((n - 1))]}"; cat "$OUT_H/gpu_tests.lane$n.log"; } >>"$OUT_H/gpu_tests.log"
    show_failures "$OUT_H/gpu_tests.lane$n.log"
    row "tests$n" "$(pytest_result "$OUT_H/gpu_tests.lane$n.log")" "$SECS"
    rm -f "$OUT_H/gpu_tests.lane$n.log"
    [ "$RC" = 0 ] || status=1
  done
  [ -n "${TEST_ALONE:-}" ] || return
  # shellcheck disable=SC2086  # TEST_ALONE is paths
  timed tests_alone "$OUT_H/gpu_tests.alone.log" python3 -m pytest $TEST_ALONE "${GPU_PYTEST_ARGS[@]}"
  { echo "######## alone: $TEST_ALONE"; cat "$OUT_H/gpu_tests.alone.log"; } >>"$OUT_H/gpu_tests.log"
  show_failures "$OUT_H/gpu_tests.alone.log"
  row alone "$(pytest_result "$OUT_H/gpu_tests.alone.log")" "$SECS"
  rm -f "$OUT_H/gpu_tests.alone.log"
  [ "$RC" = 0 ] || status=1
}

stage_e2e() {
  export BCG_ARTIFACTS=$OUT_H/e2e
  rm -rf "$BCG_ARTIFACTS" && mkdir -p "$BCG_ARTIFACTS"
  timed e2e "$OUT_H/e2e_tests.log" python3 -m pytest ${E2E_TESTS:-tests/e2e} -m e2e -q -rfEs -p no:cacheprovider
  show_failures "$OUT_H/e2e_tests.log"
  row e2e "$(pytest_result "$OUT_H/e2e_tests.log")" "$SECS"
  [ "$RC" = 0 ] || status=1
  if [ -f "$BCG_ARTIFACTS/e2e_summary.json" ]; then
    cp "$BCG_ARTIFACTS/e2e_summary.json" "$OUT_H/e2e_summary.json"
    python3 scripts/e2e_summary.py "$BCG_ARTIFACTS/e2e_summary.json" 2>&1 | sed 's/^/    /' >>"$OUT_H/summary.rows"
  fi
}

stage_noflags() {
  local line
  timed noflags "$OUT_H/noflags.log" python3 scripts/noflags_check.py "$OUT_H" "/tmp/bcg_noflags/$HOST" ${NOFLAGS_FAMILIES:-}
  case "$RC" in
    skip) line="skipped: time budget spent" ;;
    124 | 137) line="TIMEOUT after ${SECS}s" ;;
    0) line="ok: $(grep -c '^ok: ' "$OUT_H/noflags.log") families" ;;
    *) line="FAILED (exit $RC): $(grep -c '^FAILED: ' "$OUT_H/noflags.log") failed (noflags.log)" ;;
  esac
  echo "$line"
  row noflags "$line" "$SECS"
  grep -E "^(ok|FAILED|server): " "$OUT_H/noflags.log" | sed 's/^/    /' | tee -a "$OUT_H/summary.rows"
  [ "$RC" = 0 ] || status=1
}

stage_ray() {
  local line
  timed ray "$OUT_H/ray.log" python3 scripts/ray_gpu_check.py "$OUT_H" "/tmp/bcg_ray/$HOST"
  case "$RC" in
    skip) line="skipped: time budget spent" ;;
    124 | 137) line="TIMEOUT after ${SECS}s" ;;
    *) line=$(grep -E "^ray: " "$OUT_H/ray.log" | tail -1); line=${line:-"FAILED (exit $RC, no summary; see ray.log)"} ;;
  esac
  echo "$line"
  row ray "${line#ray: }" "$SECS"
  [ "$RC" = 0 ] || status=1
}

stage_bench() {
  local entry name family extra t0=$SECONDS n=0 failed="" families=${BENCH_FAMILIES:-zimage flux qwen_image flux2}
  # This suite is how a family gets verified: families still awaiting it (FLUX.2) opt in here.
  export BCG_UNVERIFIED_FAMILIES=1
  for entry in $families; do
    name=${entry%%=*} family=${entry#*=}  # "flux_fp8=flux": run "flux_fp8" of family flux; "flux": both flux
    # Quick by default; BENCHMARKS.md runs use REPEATS=3 MODES=eager,bcg,bcg-full,compile-cudagraphs.
    extra="BENCH_ARGS_${name}"  # this run's arguments after the shared ones (the last wins)
    timed "bench $name" "$OUT_H/bench_${name}.log" python3 -m bench --family "$family" \
      --resolutions "$resolutions" --repeats "${REPEATS:-2}" --modes "${MODES:-eager,bcg-full,bcg}" ${!extra:-} \
      --json "$OUT_H/bench_${name}.json"
    grep -E "^\[BCG\] (replayed|captured)|error|Error" "$OUT_H/bench_${name}.log" | tail -3
    if [ "$RC" = 0 ]; then n=$((n + 1)); else failed+=" $name(${RC/124/timeout})"; status=1; fi
  done
  row bench "$n/$(wc -w <<<"$families") families${failed:+; failed:$failed}" $((SECONDS - t0))
  if compgen -G "$OUT_H/bench_*.json" >/dev/null; then
    python3 -m bench.table "$OUT_H"/bench_*.json 2>&1 | sed 's/^/    /' >>"$OUT_H/summary.rows"
  fi
}

stage_batch() {
  local spec family prompts seeds depth jobs name
  for spec in ${BATCH_RUNS:-zimage:100 qwen_image:100}; do
    IFS=: read -r family prompts seeds depth jobs <<<"$spec"
    name=${family}_${prompts}x${seeds:-1}${depth:+_d$depth}${jobs:+_j$jobs}
    timed "batch $name" "$OUT_H/batch_${name}.log" python3 -m bench.batch --family "$family" \
      --prompts "${prompts:-100}" --seeds "${seeds:-1}" ${depth:+--depth "$depth"} ${jobs:+--jobs "$jobs"} \
      --json "$OUT_H/batch_${name}.json" \
      ${BATCH_PROFILE:+--profile-first "$OUT_H/batch_${name}_first.prof.txt"}
    # the summary bench.batch prints last, from its first line ("<family> depth=...") on; else the log's end
    if grep -q "^${family} depth=" "$OUT_H/batch_${name}.log"; then
      sed -n "/^${family} depth=/,\$p" "$OUT_H/batch_${name}.log"
    else
      tail -8 "$OUT_H/batch_${name}.log"
    fi | sed 's/^/    /' >>"$OUT_H/summary.rows"
    case "$RC" in 0) row batch "$name: ok" "$SECS" ;; *) row batch "$name: FAILED (exit $RC, see batch_${name}.log)" "$SECS"; status=1 ;; esac
  done
}

stage_server() {
  local line
  rm -f "$OUT_H/server.json"
  timed server "$OUT_H/server.log" python3 -m bench.server ${SERVER_ARGS:-} --json "$OUT_H/server.json" --work "/tmp/bcg_server/$HOST"
  case "$RC" in
    skip) line="skipped: time budget spent" ;;
    0) line="ok (server.json)" ;;
    124 | 137) line="TIMEOUT after ${SECS}s (server.json holds the sizes that finished)"; status=1 ;;
    *) line="FAILED (exit $RC, see server.log$(grep -q '^NOT bit-equal' "$OUT_H/server.log" && echo '; NOT bit-equal'))"; status=1 ;;
  esac
  echo "$line"
  row server "$line" "$SECS"
  if [ -f "$OUT_H/server.json" ]; then  # the markdown table, unindented: ready to paste into docs/benchmarks.md
    python3 -m bench.server_report "$OUT_H/server.json" >>"$OUT_H/summary.rows" 2>&1
  fi
}

stage_compiler() {
  timed compiler "$OUT_H/compiler.log" python3 -m bench.compiler ${COMPILER_ARGS:---family flux --depth 2 --steps 8} \
    --json "$OUT_H/compiler.json"
  case "$RC" in 0) row compiler "ok (compiler.json)" "$SECS" ;; *) row compiler "FAILED (exit ${RC/124/timeout}, see compiler.log)" "$SECS"; status=1 ;; esac
  grep -E "^[a-z0-9_]+ depth=|^\|" "$OUT_H/compiler.log" | sed 's/^/    /' >>"$OUT_H/summary.rows"
}

stage_serverbatch() {
  # shellcheck disable=SC2086  # SERVER_BATCH_ARGS is words
  timed serverbatch "$OUT_H/server_batch.log" python3 -m bench.server_batch ${SERVER_BATCH_ARGS:---model zimage --prompts 100} \
    --json "$OUT_H/server_batch.json"
  case "$RC" in 0) row serverbatch "ok (server_batch.json)" "$SECS" ;; *) row serverbatch "FAILED (exit ${RC/124/timeout}, see server_batch.log)" "$SECS"; status=1 ;; esac
  grep -E "server batch: " "$OUT_H/server_batch.log" | sed 's/^/    /' >>"$OUT_H/summary.rows"
}

stage_fusion() {
  local part
  for part in fusion_blocks fusion_map; do
    # shellcheck disable=SC2086  # the ARGS are words
    if [ $part = fusion_blocks ]; then
      timed $part "$OUT_H/$part.log" python3 -m bench.fusion_blocks --size "${resolutions%%x*}" ${FUSION_BLOCKS_ARGS:-} --json "$OUT_H/$part.json"
    else
      timed $part "$OUT_H/$part.log" python3 -m bench.fusion_map --size "${resolutions%%x*}" ${FUSION_ARGS:-} --json "$OUT_H/$part.json"
    fi
    case "$RC" in 0) row $part "ok ($part.json)" "$SECS" ;; *) row $part "FAILED (exit ${RC/124/timeout}, see $part.log)" "$SECS"; status=1 ;; esac
    grep -E "^\||^- " "$OUT_H/$part.log" | sed 's/^/    /' >>"$OUT_H/summary.rows"
  done
}

stage_not_exact() { # one bench.not_exact per ';'-separated argument list of NOT_EXACT_ARGS
  local args n=0
  IFS=';' read -ra runs <<<"${NOT_EXACT_ARGS:---family ltxav --size 512x512x1 --batch 2}"
  for args in "${runs[@]}"; do
    n=$((n + 1))
    # shellcheck disable=SC2086  # each list is words
    timed "not_exact$n" "$OUT_H/not_exact$n.log" python3 -m bench.not_exact $args --json "$OUT_H/not_exact$n.json"
    row "not_exact$n" "$args: exit ${RC/124/timeout}" "$SECS"
    grep -E "^not_exact: " "$OUT_H/not_exact$n.log" | sed 's/^/    /' >>"$OUT_H/summary.rows"
    [ "$RC" = 0 ] || { tail -6 "$OUT_H/not_exact$n.log" | sed 's/^/    /' >>"$OUT_H/summary.rows"; status=1; }
  done
}

run_host() { # run_host <host dir or ""> <name> <out dir>; in a subshell: its PYTHONPATH and COMFYUI_PATH stay its own
  local dir=$1 t0=$SECONDS comfy
  HOST=$2 OUT_H=$3 status=0
  mkdir -p "$OUT_H" && rm -f "$OUT_H/summary.rows"
  echo "#################### host $HOST ${dir:+($dir)}"
  if [ -n "$dir" ]; then host_packages "$dir" "$HOST" || { row setup "FAILED: packages from $dir" 0; return 1; }; fi
  comfy=$(host_comfy "$dir" "$HOST") || { row setup "FAILED: ComfyUI from ${dir:-COMFYUI_PATH}" 0; return 1; }
  export COMFYUI_PATH=$comfy
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1
    python3 - <<'PY' 2>&1
import importlib.metadata as md, os, re, torch
def v(name):
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return "missing"
comfy = os.environ["COMFYUI_PATH"]
try:
    cv = re.search(r'"(.+)"', open(os.path.join(comfy, "comfyui_version.py")).read()).group(1)
except OSError:
    cv = "none"
try:
    import comfy_kitchen as ck
    cuda = ck.list_backends().get("cuda", {})
    kitchen_cuda = "available" if cuda.get("available") else f"unavailable ({cuda.get('unavailable_reason')})"
except Exception as exc:
    kitchen_cuda = f"import failed ({exc})"
print(f"ComfyUI {cv} at {comfy}; python {'.'.join(map(str, __import__('sys').version_info[:3]))}, torch {torch.__version__}, "
      f"CUDA {torch.cuda.is_available()}; comfy-kitchen {v('comfy-kitchen')} (cuda backend {kitchen_cuda}), comfy-aimdo {v('comfy-aimdo')}, av {v('av')}")
PY
  } | tee "$OUT_H/env.txt"
  row setup "$(tail -1 "$OUT_H/env.txt" | cut -d';' -f1)" $((SECONDS - t0))
  for s in $stages; do "stage_$s"; done
  # Few files come back from the GPU machine: keep these, pack the rest.
  {
    echo "== $HOST: $(sed -n 1p "$OUT_H/env.txt")"
    sed -n 2p "$OUT_H/env.txt"
    cat "$OUT_H/summary.rows"
  } >"$OUT_H/summary.txt"
  rm -f "$OUT_H/summary.rows"
  (cd "$OUT_H" && mapfile -t rest < <(ls -A | grep -vx -e summary.txt -e gpu_tests.log -e noflags.json -e e2e_summary.json -e ray_check.json -e server.json -e fusion_map.json -e fusion_blocks.json -e server_batch.json -e details.tar.gz) \
    && if [ "${#rest[@]}" -gt 0 ]; then tar czf details.tar.gz "${rest[@]}" && rm -rf "${rest[@]}"; fi)
  return $status
}

# ------------------------------------------------------------------ hosts
hosts=()
if [ -n "${HOSTS:-}" ]; then
  read -r -a hosts <<<"$HOSTS"
elif [ -n "${BCG_HOST:-}" ]; then
  hosts=("$BCG_HOST")
elif [ -n "${BCG_WHEELS:-}" ]; then
  hosts=("$BCG_WHEELS")
fi
NHOSTS=${#hosts[@]}
overall=0
if [ "$NHOSTS" -eq 0 ]; then
  (run_host "" "${HOST_NAME:-default}" "$OUT") || overall=1
else
  for h in "${hosts[@]}"; do
    [ -d "$h" ] || { echo "no host folder $h" >&2; overall=1; continue; }
    name=$(basename "$h"); name=${name#.}
    if [ "$NHOSTS" -eq 1 ]; then dest=$OUT; else dest=$OUT/$name; fi
    (run_host "$h" "$name" "$dest") || overall=1
  done
fi

echo
echo "== summary ($((SECONDS - START))s) =="
for f in "$OUT"/summary.txt "$OUT"/*/summary.txt; do [ -f "$f" ] && cat "$f"; done | tee "$OUT/.summary_all"
[ "$NHOSTS" -gt 1 ] && mv "$OUT/.summary_all" "$OUT/summary.txt" || rm -f "$OUT/.summary_all"
exit $overall
