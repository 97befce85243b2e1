#!/usr/bin/env bash
# On a node with GPUs: straggler and hang trials of `fabscope job` against a PyTorch DDP job that
# loads the profiler plugin (bench/job-trials.py), over NVLink and over the socket path
# (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1), and NCCL's RAS answers captured while a rank is stopped.
# Logs in $OUT/job-<phase>.tar.gz, the summary on stdout.
#
#   scripts/device-job.sh build            fabscope + the plugin (sm_90), nlohmann from .devdeps/include
#   scripts/device-job.sh nvlink [ARGS]    the trials over NVLink (ARGS go to bench/job-trials.py)
#   scripts/device-job.sh socket [ARGS]    the same over sockets
#
# Work files stay in $WORK (default /tmp/fabscope-job) between phases on the same node.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/device-out}
WORK=${WORK:-/tmp/fabscope-job}
GPUS=${GPUS:-4}
PHASE=${1:-build}
shift || true
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PATH=/usr/local/cuda/bin:$PATH
BUILD=$WORK/build
BIN=$BUILD/src/cli/fabscope
PLUGIN=$BUILD/plugins/nccl-profiler/libnccl-profiler-fabscope.so
L=$WORK/logs-$PHASE
mkdir -p "$OUT" "$L"
pack() { tar -C "$WORK" -czf "$OUT/job-$PHASE.tar.gz" "logs-$PHASE" 2>/dev/null; }
trap pack EXIT

case $PHASE in
  build)
    {
      nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
      nvidia-smi topo -m
      python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
      nproc
    } >"$L/machine.log" 2>&1
    head -3 "$L/machine.log"
    gen=()
    command -v ninja >/dev/null && gen=(-G Ninja)
    cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFABSCOPE_BUILD_TESTS=OFF \
      -DFABSCOPE_EXTRA_INCLUDE="$ROOT/.devdeps/include" -DFABSCOPE_CUDA_ARCHITECTURES=90-real >"$L/configure.log" 2>&1 \
      || { tail -20 "$L/configure.log"; exit 1; }
    t0=$(date +%s)
    cmake --build "$BUILD" -j"$(nproc)" --target fabscope nccl_profiler_fabscope >"$L/build.log" 2>&1 \
      || { grep -E "error" "$L/build.log" | head -20; exit 1; }
    echo "build: $(( $(date +%s) - t0 )) s"
    ls -l "$BIN" "$PLUGIN"
    ;;
  nvlink|socket)
    env=()
    [[ $PHASE == socket ]] && env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1)
    rm -rf "$L/trials"
    env "${env[@]}" timeout -k 10 "${TRIALS_TIMEOUT:-560}" python3 bench/job-trials.py --fabscope "$BIN" --plugin "$PLUGIN" \
      --out "$L/trials" --nproc "$GPUS" --ras-capture scripts/device-ras-capture.py "$@"
    echo "rc=$?"
    rm -rf "$L/trials/shm"
    tail -5 "$L/trials/torchrun.log"
    cat "$L/trials/watch.err" | head -5
    ;;
  *)
    echo "unknown phase $PHASE" >&2
    exit 3
    ;;
esac
