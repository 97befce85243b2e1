#!/usr/bin/env bash
# Runs every node-level command of fabscope on a GPU node and collects the output: probe, check,
# doctor, env (all formats) and env lint (clean and with a broken environment), exporter --once,
# fabscope log on an NCCL_DEBUG=INFO log that fabscope bench just produced, the bench watchdog,
# and the socket transport with and without the socket tuning `fabscope env` plans.
# Logs go to $OUT/node-logs.tar.gz (one file per step) and $OUT/node-summary.txt.
#
#   scripts/device-node.sh
#
# Builds like scripts/device-bench.sh (same build directory, so a second call reuses it).
# Needs: nvcc, NCCL, cmake; nlohmann/json.hpp in .devdeps/include when the node lacks it.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/device-out}
LOGS=$ROOT/build-device-node-logs
BUILD=$ROOT/build-device
rm -rf "$LOGS" && mkdir -p "$OUT" "$LOGS"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PATH=/usr/local/cuda/bin:$PATH
BIN=$BUILD/src/cli/fabscope
SUMMARY=$LOGS/summary.txt
note() { echo "$*" | tee -a "$SUMMARY"; }
step() {  # step NAME TIMEOUT CMD...: CMD's stdout+stderr to NAME.log, rc and wall time noted
  local name=$1 limit=$2 t0 t1 rc
  shift 2
  t0=$(date +%s.%N)
  timeout -k 10 "$limit" "$@" >"$LOGS/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  note "$(printf '%-26s rc=%-3s wall=%7.2fs  %s' "$name" "$rc" "$(awk "BEGIN{print $t1 - $t0}")" "$*")"
}

gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
step configure 300 cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFABSCOPE_BUILD_TESTS=OFF -DFABSCOPE_EXTRA_INCLUDE="$ROOT/.devdeps/include" \
  -DFABSCOPE_CUDA_ARCHITECTURES=90-real
step build 500 cmake --build "$BUILD" -j"$(nproc)" --target fabscope
[ -x "$BIN" ] || { note "fabscope did not build"; tar -czf "$OUT/node-logs.tar.gz" -C "$LOGS" .; exit 1; }

step version 30 "$BIN" version
step probe 60 "$BIN" probe
step probe-json 60 "$BIN" probe --json
step check 60 "$BIN" check
step check-json 60 "$BIN" check --json
step doctor 60 "$BIN" doctor
step doctor-json 60 "$BIN" doctor --json
for f in shell envfile docker k8s slurm torchrun json; do
  step "env-$f" 60 "$BIN" env --format "$f" --nodes 2 --gpus-per-node 2
done
step env-lint-clean 60 "$BIN" env lint
step env-lint-broken 60 env NCCL_IB_HCAS=mlx5_0 NCCL_SOCKET_IFACE=eth0 NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 \
  NCCL_IB_DISABLE=maybe NCCL_SOCKET_IFNAME==ib9 "$BIN" env lint
step doctor-broken-env 60 env NCCL_IB_HCAS=mlx5_0 NCCL_DEBUG=INFO "$BIN" doctor
step exporter-once 60 "$BIN" exporter --once --checks-interval 1

# fabscope log on the log of a real run (interleaved ranks of one process).
step bench-debug 120 env NCCL_DEBUG=INFO "$BIN" bench --sizes 1M,64M --no-progress
step log-of-bench 60 "$BIN" log "$LOGS/bench-debug.log"
step bench-debug-socket 120 env NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 \
  "$BIN" bench --sizes 1M --no-progress
step log-of-socket 60 "$BIN" log "$LOGS/bench-debug-socket.log"

# The watchdog after the fix that parks aborted steps (no table after the abort message).
step watchdog 120 "$BIN" bench --sizes 1M --debug-hang-rank 1 --timeout 5 --no-progress

# Socket transport: NCCL's defaults against the socket tuning `fabscope env` plans without RDMA.
for run in 1 2; do
  step "socket-default-$run" 300 env NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 \
    "$BIN" bench --sizes 64M,256M,1G --no-progress
  step "socket-tuned-$run" 300 env NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_NTHREADS=4 \
    NCCL_NSOCKS_PERTHREAD=4 "$BIN" bench --sizes 64M,256M,1G --no-progress
done
tar -czf "$OUT/node-logs.tar.gz" -C "$LOGS" .
cp "$SUMMARY" "$OUT/node-summary.txt"
