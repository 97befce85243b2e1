#!/usr/bin/env bash
# On a GPU node: builds fabscope and libnccl-tuner-fabscope.so, then shows that the installed
# NCCL loads the plugin (its INFO log names it; the plugin logs its table and a bad line with
# file:line) and runs collectives with it, by path and by NCCL_TUNER_PLUGIN=fabscope, and that
# `fabscope tune` on one rank ends cleanly saying there is nothing to tune (idle and with
# --compute-load). Then the environment search's worker on the GPU: a fresh process per value, with
# NCCL's ENV log showing it read the value, and the worker under a compute load against idle
# (one rank: NCCL's single-rank copy kernel is what shares the SMs). Logs in $OUT (or
# ./device-out): one file per step and summary.txt.
# Needs: nvcc, NCCL, cmake; .devdeps/include may hold nlohmann/json.hpp where the node has none.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/device-out}
BUILD=$ROOT/build-device-tune
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0  # NVLink SHARP stays off on shared nodes
export PATH=/usr/local/cuda/bin:$PATH
SUMMARY=$OUT/summary.txt
note() { echo "$*" | tee -a "$SUMMARY"; }
step() {  # step NAME TIMEOUT CMD...
  local name=$1 limit=$2 t0 rc
  shift 2
  t0=$(date +%s)
  timeout -k 5 "$limit" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  note "$(printf '%-22s rc=%-3s %4ss  %s' "$name" "$rc" "$(( $(date +%s) - t0 ))" "$*")"
}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  ls -l /usr/lib/x86_64-linux-gnu/libnccl.so* /usr/local/cuda/lib64/libnccl.so* 2>/dev/null
  nvcc --version | tail -1
} >"$OUT/machine.log" 2>&1
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
step configure 120 cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFABSCOPE_BUILD_TESTS=OFF \
  -DFABSCOPE_EXTRA_INCLUDE="$ROOT/.devdeps/include" -DFABSCOPE_CUDA_ARCHITECTURES=90-real
step build 240 cmake --build "$BUILD" -j"$(nproc)" --target fabscope nccl_tuner_fabscope
BIN=$BUILD/src/cli/fabscope
PLUGIN=$BUILD/plugins/nccl-tuner/libnccl-tuner-fabscope.so
TABLE=$OUT/nccl_tuner.csv
cat >"$TABLE" <<'CSV'
# device test table: one good row per collective, one bad line (line 3)
allreduce,0,18446744073709551615,ring,simple,8,-1,-1
allreduce,0,100,ring,warp,8,-1,-1
allgather,0,18446744073709551615,ring,ll128,-1,-1,-1
CSV
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,ENV
step plugin-by-path 90 env NCCL_TUNER_PLUGIN="$PLUGIN" NCCL_TUNER_CONFIG_FILE="$TABLE" \
  "$BIN" bench -g 1 -b 1M -e 64M -f 8 --no-progress
step plugin-by-name 90 env NCCL_TUNER_PLUGIN=fabscope LD_LIBRARY_PATH="$(dirname "$PLUGIN"):${LD_LIBRARY_PATH:-}" \
  NCCL_TUNER_CONFIG_FILE="$TABLE" "$BIN" bench all_gather -g 1 -b 1M -e 64M -f 8 --no-progress
step tune-one-rank 90 "$BIN" tune -g 1 --no-progress -o "$OUT/tune-out"
step tune-one-rank-load 90 "$BIN" tune -g 1 --no-progress --compute-load 50 -o "$OUT/tune-out-load"
export NCCL_DEBUG_SUBSYS=ENV
spec() {  # spec ENV_JSON LOAD_PCT: all-reduce at 1 MiB, 64 MiB, 256 MiB, 0.3 s of timed work each
  printf '{"points":[{"collective":"all_reduce","bytes":1048576},{"collective":"all_reduce","bytes":67108864},'
  printf '{"collective":"all_reduce","bytes":268435456}],"budget_s":0.3,"env":%s,"simulate":false,"seed":0,' "$1"
  printf '"gpus":1,"plugin":"%s","compute_load_pct":%s,"timeout_s":60}' "$PLUGIN" "$2"
}
step worker-default 90 "$BIN" tune --env-worker "$(spec '[]' 0)"
step worker-buffsize 90 "$BIN" tune --env-worker "$(spec '[{"name":"NCCL_BUFFSIZE","value":"8388608"}]' 0)"
step worker-nthreads 90 "$BIN" tune --env-worker "$(spec '[{"name":"NCCL_NTHREADS","value":"256"}]' 0)"
step worker-load50 90 "$BIN" tune --env-worker "$(spec '[]' 50)"
step worker-load100 90 "$BIN" tune --env-worker "$(spec '[]' 100)"
step worker-idle-again 90 "$BIN" tune --env-worker "$(spec '[]' 0)"
unset NCCL_DEBUG NCCL_DEBUG_SUBSYS
for f in plugin-by-path plugin-by-name tune-one-rank tune-one-rank-load; do
  note "--- $f: NCCL version, plugin and table lines"
  grep -E 'NCCL version|[Tt]uner|TUNER|nothing to tune|Avg bus' "$OUT/$f.log" | sed 's/^[^ ]* [0-9]*:[0-9]*:[0-9]* //' | head -20 | tee -a "$SUMMARY"
done
note "--- tune-one-rank files written: $(ls "$OUT/tune-out" 2>/dev/null | wc -l)"
for f in worker-default worker-buffsize worker-nthreads worker-load50 worker-load100 worker-idle-again; do
  note "--- $f: what NCCL read from the environment, and the worker's result line"
  grep -E 'set by environment|fabscope-tune-worker:' "$OUT/$f.log" | sed 's/^[^ ]* [0-9]*:[0-9]*:[0-9]* //' | head -8 | tee -a "$SUMMARY"
done
