#!/usr/bin/env bash
# Builds fabscope with the GPU benchmark on a GPU node and runs everything the bench needs
# checked there: the GPU unit tests, the three launchers, the socket path, adaptive against
# fixed iterations, CUDA graphs at 8 B, the watchdog and the setup errors. Logs go to
# $OUT/bench-logs.tar.gz (one file per step, plus summary.txt).
#
#   scripts/device-bench.sh build    configure + build (fabscope, fabscope_bench_tests)
#   scripts/device-bench.sh tests    GPU unit tests
#   scripts/device-bench.sh measure  launchers, sweeps, graphs, socket path, errors
#   scripts/device-bench.sh all      all three
#
# Needs: nvcc, NCCL, cmake, ninja or make; optional mpirun and torchrun. Headers missing on the
# node (nlohmann/json.hpp, GoogleTest sources) can be put in .devdeps/include and
# .devdeps/googletest.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/device-out}
LOGS=$ROOT/build-device-logs
GTEST=$ROOT/build-device-gtest  # build outputs stay on the node between calls; .devdeps is replaced
BUILD=$ROOT/build-device
mkdir -p "$OUT" "$LOGS" "$GTEST"
# NVLink SHARP/multicast stays off on the shared device nodes.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PATH=/usr/local/cuda/bin:$PATH
JOBS=$(nproc)
BIN=$BUILD/src/cli/fabscope
TESTS=$BUILD/tests/fabscope_bench_tests
pick_build() {  # the full build, or the bench-only copy when the full CLI did not build
  if [[ ! -x $BIN && -x $BUILD-bench-only/src/cli/fabscope ]]; then
    BIN=$BUILD-bench-only/src/cli/fabscope
    TESTS=$BUILD-bench-only/tests/fabscope_bench_tests
  fi
}
pick_build
SUMMARY=$LOGS/summary.txt

note() { echo "$*" | tee -a "$SUMMARY"; }

# step NAME TIMEOUT CMD...: runs CMD with a timeout, logs to NAME.log, records rc and wall time.
step() {
  local name=$1 limit=$2
  shift 2
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout -k 10 "$limit" "$@" >"$LOGS/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  note "$(printf '%-28s rc=%-3s wall=%7.2fs  %s' "$name" "$rc" "$(awk "BEGIN{print $t1 - $t0}")" "$*")"
  return 0
}

do_build() {
  note "== build $(date -u +%FT%TZ) on $(hostname)"
  {
    nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv
    nvidia-smi topo -m
    nvcc --version | tail -2
    ls -l /usr/local/cuda/lib64/libnccl.so* 2>/dev/null || ldconfig -p | grep nccl
    command -v mpirun && mpirun --version | head -1
    command -v torchrun && python3 -c 'import torch; print("torch", torch.__version__)'
    command -v all_reduce_perf
  } >"$LOGS/machine.log" 2>&1
  local gtest_args=()
  if [[ -d .devdeps/googletest && -z "$(find "$GTEST/install" -name GTestConfig.cmake 2>/dev/null)" ]]; then
    step gtest-build 300 bash -c "cmake -S .devdeps/googletest -B $GTEST/build -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX=$GTEST/install >/dev/null && cmake --build $GTEST/build -j$JOBS \
      && cmake --install $GTEST/build >/dev/null"
  fi
  local cfg
  cfg=$(find "$GTEST/install" -name GTestConfig.cmake 2>/dev/null | head -1)
  [[ -n $cfg ]] && gtest_args=(-DGTest_DIR="$(dirname "$cfg")")
  local gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  step configure 300 cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFABSCOPE_EXTRA_INCLUDE="$ROOT/.devdeps/include" -DFABSCOPE_CUDA_ARCHITECTURES=90-real "${gtest_args[@]}"
  step build 580 cmake --build "$BUILD" -j"$JOBS" --target fabscope fabscope_bench_tests
  if [[ ! -x $BIN ]]; then
    # Another subcommand's work in progress does not build: build a copy of the tree whose CLI
    # has only the version, probe and bench commands (same libraries, same tests).
    local src=$ROOT/build-device-src
    rm -rf "$src" && mkdir -p "$src"
    cp -r CMakeLists.txt src tests "$src/"
    find "$src/src/cli" -name '*.cpp' ! -name main.cpp ! -name version.cpp ! -name probe.cpp ! -name bench.cpp -delete
    cat >"$src/src/cli/commands.cpp" <<'CPP'
#include "cli/commands.hpp"
namespace fabscope::cli {
namespace {
const Command kCommands[] = {{"version", "print fabscope's version", cmd_version},
                             {"probe", "describe this node", cmd_probe},
                             {"bench", "measure NCCL collectives", cmd_bench}};
}
const Command* commands() { return kCommands; }
int command_count() { return 3; }
}  // namespace fabscope::cli
CPP
    step configure-bench-only 300 cmake -S "$src" -B "$BUILD-bench-only" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DFABSCOPE_EXTRA_INCLUDE="$ROOT/.devdeps/include" -DFABSCOPE_CUDA_ARCHITECTURES=90-real "${gtest_args[@]}"
    step build-bench-only 580 cmake --build "$BUILD-bench-only" -j"$JOBS" --target fabscope fabscope_bench_tests
    note "fabscope built with version/probe/bench only (the full target did not build)"
    pick_build
  fi
  { ldd "$BIN"; } >"$LOGS/ldd.log" 2>&1
  note "dynamic NCCL/cudart dependencies: $(ldd "$BIN" | grep -cE 'libnccl|libcudart') (0 = loaded at run time)"
}

do_tests() {
  step gpu-tests 400 "$TESTS" --gtest_color=no
  note "$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$LOGS/gpu-tests.log" | tr '\n' ' ')"
}

do_measure() {
  local np="--no-progress"
  # One rank per GPU for the launchers (at most 2); one more rank than GPUs for the error cases.
  local ngpu ranks
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  ranks=$(( ngpu >= 2 ? 2 : 1 ))
  # The sweep the targets were measured with (nccl-tests 2.19.6: -b 8 -e 4G -f 2 -g 2).
  step sweep-adaptive 300 "$BIN" bench -b 8 -e 4G $np --json-file "$LOGS/sweep-adaptive.json"
  step sweep-fixed 300 "$BIN" bench -b 8 -e 4G -n 20 -w 5 $np --json-file "$LOGS/sweep-fixed.json"
  step sweep-adaptive-2 300 "$BIN" bench -b 8 -e 4G $np --json-file "$LOGS/sweep-adaptive-2.json"
  step sendrecv-4g 120 "$BIN" bench sendrecv --sizes 1G,4G $np
  step graphs-8b-off 60 "$BIN" bench --sizes 8 -n 2000 -w 100 $np
  step graphs-8b-on 60 "$BIN" bench --sizes 8 -n 2000 -w 100 -G 1 $np
  step graphs-8b-adaptive-on 60 "$BIN" bench --sizes 8,1K,64K -G 1 $np
  for c in all_gather reduce_scatter broadcast reduce alltoall; do
    step "coll-$c" 120 "$BIN" bench "$c" -b 8 -e 1G -f 8 $np
  done
  if command -v all_reduce_perf >/dev/null; then
    step nccl-tests-all_reduce 300 all_reduce_perf -b 8 -e 4G -f 2 -g 2
    command -v sendrecv_perf >/dev/null && step nccl-tests-sendrecv 120 sendrecv_perf -b 1G -e 4G -f 4 -g 2
  fi
  if command -v mpirun >/dev/null; then
    local root=()
    [[ $(id -u) == 0 ]] && root=(--allow-run-as-root)
    step mpi 180 mpirun -np "$ranks" "${root[@]}" -x NCCL_NVLS_ENABLE -x PATH "$BIN" bench -b 8 -e 1G -f 4 $np
    step "mpi-$((ngpu + 1))-ranks-$ngpu-gpus" 120 mpirun -np $((ngpu + 1)) "${root[@]}" --oversubscribe "$BIN" bench \
      --sizes 8 $np --timeout 30
    step mpi-mismatch 120 mpirun -np "$ranks" "${root[@]}" bash -c \
      "exec $BIN bench --sizes \$((OMPI_COMM_WORLD_RANK + 1))M --no-progress --timeout 30"
  fi
  if command -v torchrun >/dev/null; then
    step torchrun 180 torchrun --nproc_per_node="$ranks" --nnodes=1 --master_port=29600 --no-python "$BIN" bench \
      -b 8 -e 1G -f 4 $np
    step torchrun-json 180 torchrun --nproc_per_node="$ranks" --master_port=29610 --no-python "$BIN" bench sendrecv \
      --sizes 1M,256M --json $np
  fi
  step socket 300 env NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 "$BIN" bench -b 8 -e 256M -f 4 $np
  step watchdog 120 "$BIN" bench --sizes 1M --debug-hang-rank 1 --timeout 5 $np
  step err-too-many-gpus 60 "$BIN" bench --gpus $((ngpu + 1)) $np
  step err-no-gpu 60 env CUDA_VISIBLE_DEVICES= "$BIN" bench $np
  step csv 60 "$BIN" bench --sizes 8,1M --csv $np
}

case "${1:-all}" in
  build) do_build ;;
  tests) do_tests ;;
  measure) do_measure ;;
  all) do_build; do_tests; do_measure ;;
  *) echo "usage: $0 build|tests|measure|all" >&2; exit 3 ;;
esac
tar -czf "$OUT/bench-logs.tar.gz" -C "$LOGS" .
cp "$SUMMARY" "$OUT/summary.txt"
