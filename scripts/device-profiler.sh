#!/usr/bin/env bash
# On a node with 4 GPUs (2 work too: GPUS=2): libnccl-profiler-fabscope.so loaded by NCCL under
# nccl-tests, `fabscope bench` and PyTorch (torchrun), over NVLink and over the socket path
# (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1); what it recorded against what the programs issued and
# measured; its cost against no plugin and NVIDIA's Inspector. Logs in $OUT/profiler-<phase>.tar.gz,
# summary lines on stdout.
#
#   scripts/device-profiler.sh build   fabscope + the plugin (sm_90); nccl-tests from
#                                      .devdeps/nccl-tests; Inspector from .devdeps/nccl-inspector
#                                      (NCCL's source of the node's version, ext-profiler/inspector)
#   scripts/device-profiler.sh check   counts, bytes and busbw against nccl-tests, fabscope bench and
#                                      a PyTorch job; a live scrape while the job runs; DDP steps
#   scripts/device-profiler.sh cost    8 B and 1 GiB all-reduce: none / fabscope / fabscope with
#                                      proxy steps / Inspector, alternating (ROUNDS, default 5)
#
# Work files stay in $WORK (default /tmp/fabscope-profiler) between phases on the same node.
# Needs: nvcc, NCCL, cmake, gcc, make, python3 with torch. NVLink multicast stays off.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/device-out}
WORK=${WORK:-/tmp/fabscope-profiler}
GPUS=${GPUS:-4}
ROUNDS=${ROUNDS:-5}
PHASE=${1:-all}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PATH=/usr/local/cuda/bin:$PATH
BUILD=$WORK/build
BIN=$BUILD/src/cli/fabscope
PLUGIN=$BUILD/plugins/nccl-profiler/libnccl-profiler-fabscope.so
NT=$WORK/nccl-tests
INSPECTOR_SRC=$ROOT/.devdeps/nccl-inspector/ext-profiler/inspector
INSPECTOR=$WORK/inspector/libnccl-profiler-inspector.so
L=$WORK/logs-$PHASE
mkdir -p "$OUT" "$L"
SOCKET_ENV=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1)

note() { echo "$*" | tee -a "$L/summary.txt"; }
step() {  # step NAME TIMEOUT CMD...: output in NAME.log, rc and seconds in the summary
  local name=$1 limit=$2 t0 rc
  shift 2
  t0=$(date +%s%N)
  timeout -k 5 "$limit" "$@" >"$L/$name.log" 2>&1
  rc=$?
  note "$(printf '%-34s rc=%-3s %6ss' "$name" "$rc" "$(( ($(date +%s%N) - t0) / 1000000000 ))")"
  return $rc
}
pack() { tar -C "$WORK" -czf "$OUT/profiler-$PHASE.tar.gz" "logs-$PHASE" 2>/dev/null; }
trap pack EXIT

phase_build() {
  {
    nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
    nvidia-smi topo -m
    nvcc --version | tail -2
    ls -l /usr/lib/x86_64-linux-gnu/libnccl.so* 2>/dev/null
    python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
  } >"$L/machine.log" 2>&1
  note "machine: $(head -1 "$L/machine.log") x$(grep -c . <(nvidia-smi -L)); $(grep -E '^torch' "$L/machine.log")"
  local gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  if [[ ! -x $BIN || ! -f $PLUGIN ]]; then
    step configure 200 cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFABSCOPE_BUILD_TESTS=OFF \
      -DFABSCOPE_EXTRA_INCLUDE="$ROOT/.devdeps/include" -DFABSCOPE_CUDA_ARCHITECTURES=90-real
    step build 480 cmake --build "$BUILD" -j"$(nproc)" --target fabscope nccl_profiler_fabscope
  fi
  if [[ ! -x $NT/all_reduce_perf ]]; then
    step nccl-tests 300 make -C .devdeps/nccl-tests/src -j"$(nproc)" BUILDDIR="$NT" NCCL_HOME=/usr CUDA_HOME=/usr/local/cuda \
      NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" "$NT/all_reduce_perf"
  fi
  if [[ ! -f $INSPECTOR ]]; then
    rm -rf "$WORK/inspector" && cp -r "$INSPECTOR_SRC" "$WORK/inspector"
    step inspector 200 make -C "$WORK/inspector" NCCL_HOME=/usr CUDA_HOME=/usr/local/cuda
  fi
  ls -l "$BIN" "$PLUGIN" "$NT/all_reduce_perf" "$INSPECTOR" 2>&1 | tee -a "$L/summary.txt"
}

# scrape DIR NAME: one exposition of the segments in DIR (processes that ended are still within
# the exporter's grace period) into $L/NAME.prom
scrape() {
  "$BIN" exporter --once --checks-interval 0 --jobs --jobs-dir "$1" >"$L/$2.prom" 2>"$L/$2.scrape.err"
}

PE=()
plugin_env() {  # plugin_env DIR: PE = the environment of fabscope's plugin, segments kept in a fresh DIR
  rm -rf "$1" && mkdir -p "$1"
  PE=(NCCL_PROFILER_PLUGIN="$PLUGIN" FABSCOPE_PROFILER_DIR="$1" FABSCOPE_PROFILER_KEEP=1 NCCL_DEBUG=INFO
      NCCL_DEBUG_SUBSYS=INIT,ENV)
}

phase_check() {
  local W=20 N=30 s
  # nccl-tests, one process driving every GPU: per size W warm-up + N out-of-place + N in-place
  s=$WORK/shm-nt
  plugin_env "$s"; step nt-nvlink 240 env "${PE[@]}" "$NT/all_reduce_perf" -g "$GPUS" -b 1K -e 1G -f 4 -w $W -n $N -c 0
  grep -m2 -E "PROFILER|fabscope" "$L/nt-nvlink.log" | tee -a "$L/summary.txt"
  scrape "$s" nt-nvlink
  note "nccl-tests NVLink, counts:"; python3 bench/profiler-compare.py counts "$L/nt-nvlink.prom" --nccl-tests $W $N 1024 1073741824 4 | tee -a "$L/summary.txt"
  note "nccl-tests NVLink, busbw:"; python3 bench/profiler-compare.py busbw "$L/nt-nvlink.prom" "$L/nt-nvlink.log" | tee -a "$L/summary.txt"

  s=$WORK/shm-nt-sock
  plugin_env "$s"; step nt-socket 300 env "${PE[@]}" env "${SOCKET_ENV[@]}" FABSCOPE_PROFILER_PROXY=1 "$NT/all_reduce_perf" -g "$GPUS" \
    -b 1M -e 256M -f 4 -w 5 -n 10 -c 0
  scrape "$s" nt-socket
  note "nccl-tests sockets + proxy steps, counts:"; python3 bench/profiler-compare.py counts "$L/nt-socket.prom" --nccl-tests 5 10 1048576 268435456 4 | tee -a "$L/summary.txt"
  note "nccl-tests sockets, busbw:"; python3 bench/profiler-compare.py busbw "$L/nt-socket.prom" "$L/nt-socket.log" | tee -a "$L/summary.txt"
  grep -E '^fabscope_job_network_(steps|wait_seconds)_total' "$L/nt-socket.prom" | head -8 | tee -a "$L/summary.txt"

  # fabscope bench: its own adaptive counts; busbw at each size against its own report
  s=$WORK/shm-bench
  plugin_env "$s"; step bench-nvlink 240 env "${PE[@]}" "$BIN" bench -g "$GPUS" -b 1M -e 1G -f 4
  scrape "$s" bench-nvlink
  note "fabscope bench NVLink, busbw:"; python3 bench/profiler-compare.py busbw "$L/bench-nvlink.prom" "$L/bench-nvlink.log" | tee -a "$L/summary.txt"

  # PyTorch: known collectives, a live scrape from the node's exporter while every rank is alive
  s=$WORK/shm-torch
  rm -rf "$s" && mkdir -p "$s" "$L/torch-nvlink"
  "$BIN" exporter --listen 127.0.0.1:9517 --checks-interval 0 --jobs --jobs-dir "$s" >"$L/exporter.log" 2>&1 &
  local ex=$!
  sleep 1
  step torch-nvlink 240 env NCCL_PROFILER_PLUGIN="$PLUGIN" FABSCOPE_PROFILER_DIR="$s" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT \
    torchrun --nproc_per_node="$GPUS" bench/profiler-job.py --scrape http://127.0.0.1:9517/metrics --out "$L/torch-nvlink"
  note "PyTorch NVLink, issued against recorded (live scrape):"
  python3 bench/profiler-compare.py issued "$L/torch-nvlink/live.prom" "$L"/torch-nvlink/rank*.json | tee -a "$L/summary.txt"
  grep -m1 "PROFILER/fabscope" "$L/torch-nvlink.log" | tee -a "$L/summary.txt"
  ls "$s" | tee -a "$L/summary.txt"  # empty: every rank finalized, segments removed
  rm -rf "$L/torch-socket" && mkdir -p "$L/torch-socket"
  step torch-socket 300 env "${SOCKET_ENV[@]}" NCCL_PROFILER_PLUGIN="$PLUGIN" FABSCOPE_PROFILER_DIR="$s" \
    torchrun --nproc_per_node="$GPUS" bench/profiler-job.py --count 10 --scrape http://127.0.0.1:9517/metrics \
    --out "$L/torch-socket"
  note "PyTorch sockets, issued against recorded (live scrape):"
  python3 bench/profiler-compare.py issued "$L/torch-socket/live.prom" "$L"/torch-socket/rank*.json | tee -a "$L/summary.txt"
  kill $ex; wait $ex 2>/dev/null

  # DDP steps (bench/ddp-step.py) with the plugin: loads, and the job's all-reduces are recorded
  s=$WORK/shm-ddp
  plugin_env "$s"; step ddp-nvlink 240 env "${PE[@]}" torchrun --nproc_per_node="$GPUS" bench/ddp-step.py --iters 8 --warmup 3
  scrape "$s" ddp-nvlink
  grep -h "ddp-step:" "$L/ddp-nvlink.log" | tee -a "$L/summary.txt"
  grep -E '^fabscope_job_operations_total.*op="AllReduce"' "$L/ddp-nvlink.prom" | sort | head -12 | tee -a "$L/summary.txt"
  s=$WORK/shm-ddp-sock
  plugin_env "$s"; step ddp-socket 300 env "${PE[@]}" env "${SOCKET_ENV[@]}" torchrun --nproc_per_node="$GPUS" bench/ddp-step.py \
    --iters 4 --warmup 2
  scrape "$s" ddp-socket
  grep -h "ddp-step:" "$L/ddp-socket.log" | tee -a "$L/summary.txt"
  grep -cE '^fabscope_job_operations_total' "$L/ddp-socket.prom" | sed 's/^/ddp-socket operation series: /' | tee -a "$L/summary.txt"
}

# time per call (µs, out-of-place) and busbw of one all_reduce_perf line. Cost phase settings:
# COST_SIZES (default "8 1G"; sizes ending in M or G run -n 40 -w 5, others -n SMALL_ITERS -w 200),
# SMALL_ITERS (default 2000), COST_VARIANTS (default every one), COST_PATH nvlink|socket
nt_line() { awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 13 { print $6, $8; exit }' "$1"; }

phase_cost() {
  local r v
  local -a variants=(${COST_VARIANTS:-none fabscope fabscope-proxy fabscope-nokernel inspector})
  local -a path_env=()
  [[ ${COST_PATH:-nvlink} == socket ]] && path_env=("${SOCKET_ENV[@]}")
  for r in $(seq 1 "$ROUNDS"); do
    for size in ${COST_SIZES:-8 1G}; do
      for v in "${variants[@]}"; do
        local -a e=()
        case $v in
          fabscope) e=(NCCL_PROFILER_PLUGIN="$PLUGIN" FABSCOPE_PROFILER_DIR="$WORK/shm-cost") ;;
          fabscope-proxy) e=(NCCL_PROFILER_PLUGIN="$PLUGIN" FABSCOPE_PROFILER_DIR="$WORK/shm-cost" FABSCOPE_PROFILER_PROXY=1) ;;
          fabscope-sample*) e=(NCCL_PROFILER_PLUGIN="$PLUGIN" FABSCOPE_PROFILER_DIR="$WORK/shm-cost" FABSCOPE_PROFILER_SAMPLE="${v#fabscope-sample}") ;;
          fabscope-nokernel) e=(NCCL_PROFILER_PLUGIN="$PLUGIN" FABSCOPE_PROFILER_DIR="$WORK/shm-cost" FABSCOPE_PROFILER_KERNEL=0) ;;
          inspector) e=(NCCL_PROFILER_PLUGIN="$INSPECTOR" NCCL_INSPECTOR_ENABLE=1 NCCL_INSPECTOR_DUMP_DIR="$WORK/insp") ;;
        esac
        mkdir -p "$WORK/shm-cost" "$WORK/insp"
        local -a it=(-n ${SMALL_ITERS:-2000} -w 200)
        [[ $size == *[MG] ]] && it=(-n 40 -w 5)
        timeout -k 5 120 env "${path_env[@]}" "${e[@]}" "$NT/all_reduce_perf" -g "$GPUS" -b "$size" -e "$size" "${it[@]}" -c 0 \
          >"$L/cost-$size-$v-$r.log" 2>&1
        echo "$size $v $r $(nt_line "$L/cost-$size-$v-$r.log")" >>"$L/cost.txt"
        [[ $v == inspector ]] && echo "inspector wrote $(find "$WORK/insp" -type f | wc -l) file(s), $(du -sk "$WORK/insp" | cut -f1) KiB" >>"$L/cost-$size-$v-$r.log"
        rm -rf "${WORK:?}/insp"/*
      done
    done
  done
  python3 - "$L/cost.txt" <<'EOF' | tee -a "$L/summary.txt"
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 5]
by = {}
for size, v, r, t, bw in rows:
    by.setdefault((size, v), []).append((float(t), float(bw)))
for size in sorted({r[0] for r in rows}, key=lambda x: (len(x), x)):
    base = by.get((size, "none"))
    if not base: continue
    bt = statistics.median(t for t, _ in base); bb = statistics.median(b for _, b in base) or float("nan")
    for v in sorted({r[1] for r in rows}, key=lambda x: (x != "none", x)):
        xs = by.get((size, v))
        if not xs: continue
        t = statistics.median(x for x, _ in xs); b = statistics.median(y for _, y in xs)
        print(f"cost {size:>3} {v:<15} time/call median {t:9.2f} us (min {min(x for x,_ in xs):.2f} max {max(x for x,_ in xs):.2f})"
              f"  x{t/bt:.4f}   busbw {b:8.2f} GB/s x{b/bb:.4f}  n={len(xs)}")
EOF
}

case $PHASE in
  build) phase_build ;;
  check) phase_check ;;
  cost) phase_cost ;;
  all) phase_build && phase_check && phase_cost ;;
  *) echo "device-profiler.sh: build, check, cost or all" >&2; exit 3 ;;
esac
