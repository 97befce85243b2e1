#!/usr/bin/env bash
# fabscope bench against nccl-tests, side by side on the same GPUs in one run: builds nccl-tests
# from its public source (never part of this repository: put a checkout in .devdeps/nccl-tests or
# point NCCL_TESTS_SRC at one), then runs both tools alternately for every collective and prints
# ratio tables (fabscope / nccl-tests) with bench/side_by_side.py. Every number in
# bench/RESULTS.md about the GPU benchmark comes from this script.
#
#   bench/nccl-tests-side-by-side.sh build   build nccl-tests (MPI=0, this GPU's architecture)
#   bench/nccl-tests-side-by-side.sh run     the comparisons below (needs a built fabscope)
#   bench/nccl-tests-side-by-side.sh all     both
#
# Environment: FABSCOPE (the binary; default build-device/src/cli/fabscope, else build/...),
# NCCL_TESTS_SRC, NCCL_HOME (where nccl.h and libnccl are; found when unset), REPEATS (2),
# OUT (where logs and tables go; default side-by-side-out).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/side-by-side-out}
SRC=${NCCL_TESTS_SRC:-$ROOT/.devdeps/nccl-tests}
NT_BUILD=$ROOT/build-nccl-tests
REPEATS=${REPEATS:-2}
export PATH=/usr/local/cuda/bin:$PATH
# NVLink SHARP/multicast stays off on the shared device nodes; both tools see the same setting.
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT"

find_fabscope() {
  for b in "${FABSCOPE:-}" build-device/src/cli/fabscope build-device-bench-only/src/cli/fabscope build/src/cli/fabscope; do
    [[ -n $b && -x $b ]] && { echo "$b"; return; }
  done
  echo "no fabscope binary: build one (scripts/device-bench.sh build) or set FABSCOPE" >&2
  exit 3
}

HOME_NCCL=${NCCL_HOME:-}
if [[ -z $HOME_NCCL ]]; then
  for d in /usr/local/cuda /usr /usr/local /opt/nccl; do
    [[ -f $d/include/nccl.h ]] && { HOME_NCCL=$d; break; }
  done
fi
LIBDIR=$HOME_NCCL/lib
[[ -d $HOME_NCCL/lib64 && ! -e $HOME_NCCL/lib/libnccl.so ]] && LIBDIR=$HOME_NCCL/lib64
# libnccl where the tests find it at run time, as fabscope's dlopen does.
[[ -d $LIBDIR ]] && export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

do_build() {
  [[ -f $SRC/src/common.cu ]] || { echo "no nccl-tests source in $SRC (NCCL_TESTS_SRC)" >&2; exit 3; }
  local cc home=$HOME_NCCL
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
  echo "nccl-tests $(git -C "$SRC" describe --tags 2>/dev/null || grep -ho 'NCCL_TESTS_VERSION.*' "$SRC/src/common.h" | head -1)" \
    "for sm_$cc, NCCL from $home" | tee "$OUT/nccl-tests-build.log"
  make -C "$SRC" -j"$(nproc)" MPI=0 BUILDDIR="$NT_BUILD" NCCL_HOME="$home" CUDA_HOME=/usr/local/cuda \
    NVCC_GENCODE="-gencode=arch=compute_$cc,code=sm_$cc" >>"$OUT/nccl-tests-build.log" 2>&1 \
    || { tail -30 "$OUT/nccl-tests-build.log" >&2; exit 3; }
}

compare() {  # compare NAME COLLECTIVES SWEEP FABSCOPE_ARGS NCCL_TESTS_ARGS
  python3 bench/side_by_side.py --fabscope "$BIN" --nccl-tests "$NT_BUILD" --out "$OUT" --repeats "$REPEATS" \
    --name "$1" --collectives "$2" --sweep "$3" --fabscope-args "$4" --nccl-tests-args "$5" | tee -a "$OUT/tables.md"
  echo "$1 exit ${PIPESTATUS[0]}" >>"$OUT/status.txt"
}

do_run() {
  BIN=$(find_fabscope)
  : >"$OUT/tables.md"
  : >"$OUT/status.txt"
  {
    nvidia-smi --query-gpu=name,driver_version,pci.bus_id,compute_cap --format=csv
    "$BIN" --version 2>/dev/null || true
    "$NT_BUILD/all_reduce_perf" -b 8 -e 8 -n 1 -w 0 -c 0 | head -3
  } >"$OUT/machine.txt" 2>&1
  local all=all_reduce,all_gather,reduce_scatter,broadcast,reduce,alltoall,sendrecv,gather,scatter,alltoallv,hypercube
  # 1. Defaults against defaults (fabscope: adaptive iterations, wall timer; nccl-tests -n 20 -w 1).
  compare defaults "$all" "-b 8 -e 1G -f 8" "" "-g 1"
  # 2. The CPU-bound case: back-to-back 8-byte calls, the per-call host cost.
  REPEATS=$((REPEATS + 1)) compare percall all_reduce "-b 8 -e 8" "-n 2000 -w 100" "-g 1 -n 2000 -w 100"
  # 3. nccl-tests' own iteration counts on both sides.
  compare fixed all_reduce,sendrecv "-b 8 -e 1G -f 8" "-n 20 -w 1" "-g 1 -n 20 -w 1"
  # 4. Registered buffers, local and symmetric.
  compare register-local all_reduce "-b 8 -e 1G -f 8" "-R 1" "-g 1 -R 1"
  compare register-symmetric all_reduce "-b 8 -e 1G -f 8" "-R 2" "-g 1 -R 2"
  # 5. Per-iteration timing, and the JSON file of both (layout comparison).
  compare per-iter all_reduce "-b 8 -e 1M -f 32" "-n 20 -w 1 -I 1 -J $OUT/fabscope-I.json" \
    "-g 1 -n 20 -w 1 -I 1 -J $OUT/nccl-tests-I.json"
  # 6. The GPU-only time, for reference (not nccl-tests' definition).
  REPEATS=1 compare gpu-timer all_reduce "-b 8 -e 1G -f 8" "--timer gpu" "-g 1"
}

case "${1:-all}" in
  build) do_build ;;
  run) do_run ;;
  all) do_build && do_run ;;
  *) echo "usage: $0 build|run|all" >&2; exit 3 ;;
esac
