#!/usr/bin/env bash
# On a node with 2 GPUs: NCCL's network transport between them (NCCL_P2P_DISABLE=1
# NCCL_SHM_DISABLE=1, the socket path of two nodes without RDMA) and what fabscope does with it.
# Logs of every step in $OUT/x2-<phase>.tar.gz and summary lines on stdout.
#
#   scripts/device-x2.sh build    fabscope + libnccl-tuner-fabscope.so (sm_90), and NVIDIA's example
#                                 tuner from NCCL's source in $NCCL_EXAMPLE (ext-tuner/example)
#   scripts/device-x2.sh cluster  `fabscope cluster --engine nccl`: two processes, one GPU each
#   scripts/device-x2.sh tune     `fabscope tune` on the socket path, then its tune.env against
#                                 NCCL's defaults in alternating fresh `fabscope bench` processes
#                                 (TUNE_LIMIT seconds, default 470; VERIFY_PAIRS, default 3)
#   scripts/device-x2.sh rest     PyTorch DDP (bench/ddp-step.py), the example plugin against
#                                 fabscope's with the same table, the table under a compute load;
#                                 one of them alone: phase ddp, choice or load. On a fresh machine
#                                 the tune phase's output comes from .devdeps/x2-carry/tune-socket
#
# Work files stay in $WORK (default /tmp/fabscope-x2) between phases on the same node.
# Needs: nvcc, NCCL, cmake, ninja, gcc, python3 with torch (torchrun). NVLink multicast stays off.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/device-out}
WORK=${WORK:-/tmp/fabscope-x2}
NCCL_EXAMPLE=${NCCL_EXAMPLE:-$ROOT/.devdeps/nccl-tuner-example}
# The same source with NCCL's later fix (commit 3c40c825, in v2.30.3-1): 2.28's example indexes the
# cost table as float** and crashes on the first call a row matches.
NCCL_EXAMPLE_FIXED=${NCCL_EXAMPLE_FIXED:-$ROOT/.devdeps/nccl-tuner-example-fixed}
PHASE=${1:-all}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PATH=/usr/local/cuda/bin:$PATH
BUILD=$WORK/build
BIN=$BUILD/src/cli/fabscope
PLUGIN=$BUILD/plugins/nccl-tuner/libnccl-tuner-fabscope.so
EXAMPLE=$WORK/libnccl-tuner-example.so
EXAMPLE_FIXED=$WORK/libnccl-tuner-example-fixed.so
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
  note "$(printf '%-28s rc=%-3s %6ss' "$name" "$rc" "$(( ($(date +%s%N) - t0) / 1000000000 ))")"
  return $rc
}
pack() { tar -C "$WORK" -czf "$OUT/x2-$PHASE.tar.gz" "logs-$PHASE" $([[ -d $WORK/tune-socket ]] && echo tune-socket) \
  $([[ -d $WORK/tune-load ]] && echo tune-load) 2>/dev/null; }
trap pack EXIT

busbw() {  # busbw LOG: "size busbw(out-of-place)" per row of a fabscope bench text log
  awk '$1 ~ /^[0-9]+$/ && NF >= 12 { print $1, $8 }' "$1"
}

phase_build() {
  {
    nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
    nvidia-smi topo -m
    nvcc --version | tail -2
    uname -r
    nproc
    ls -l /usr/lib/x86_64-linux-gnu/libnccl.so* /usr/local/cuda/lib64/libnccl.so* 2>/dev/null
    python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
  } >"$L/machine.log" 2>&1
  note "machine: $(head -2 "$L/machine.log" | tr '\n' ';') $(grep -E '^torch' "$L/machine.log")"
  local gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  [[ -x $BIN && -f $PLUGIN ]] && { note "build: already there"; } || {
    step configure 150 cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFABSCOPE_BUILD_TESTS=OFF \
      -DFABSCOPE_EXTRA_INCLUDE="$ROOT/.devdeps/include" -DFABSCOPE_CUDA_ARCHITECTURES=90-real
    step build 400 cmake --build "$BUILD" -j"$(nproc)" --target fabscope nccl_tuner_fabscope
  }
  step example-plugin 60 gcc -O2 -I"$NCCL_EXAMPLE/nccl" -fPIC -shared -o "$EXAMPLE" "$NCCL_EXAMPLE/plugin.c"
  [[ -f $NCCL_EXAMPLE_FIXED/plugin.c ]] && step example-plugin-fixed 60 gcc -O2 -I"$NCCL_EXAMPLE_FIXED/nccl" -fPIC -shared \
    -o "$EXAMPLE_FIXED" "$NCCL_EXAMPLE_FIXED/plugin.c"
  ls -l "$BIN" "$PLUGIN" "$EXAMPLE" "$EXAMPLE_FIXED" | tee -a "$L/summary.txt"
}

cluster_pair() {  # cluster_pair NAME ENGINE [VAR=VALUE...]: rank 1 on GPU 1 in the background, rank 0 on GPU 0
  local name=$1 engine=$2 port=$((29400 + RANDOM % 2000))
  shift 2
  local common=(RANK_UNUSED=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port FABSCOPE_CLUSTER_TOKEN=x2-device-run "$@")
  env "${common[@]}" RANK=1 CUDA_VISIBLE_DEVICES="${RANK1_GPU-1}" timeout -k 5 90 "$BIN" cluster --launcher env --engine "$engine" \
    --pairs all --pair-seconds 3 --json >"$L/$name.rank1.json" 2>"$L/$name.rank1.err" &
  local bg=$!
  step "$name" 100 env "${common[@]}" RANK=0 CUDA_VISIBLE_DEVICES=0 "$BIN" cluster --launcher env --engine "$engine" \
    --pairs all --pair-seconds 3 --json
  wait "$bg"
  python3 - "$L/$name.log" <<'PY' | tee -a "$L/summary.txt"
import json, sys, re
text = open(sys.argv[1]).read()
start = text.find("{\n")
try:
    j = json.loads(text[start:])
except Exception as e:
    print("  not JSON:", e); sys.exit()
pw = j["pairwise"]
for p in pw["pairs"]:
    print(f"  pair {p['a']}->{p['b']} {p['a_to_b_gbps']} Gb/s, {p['b']}->{p['a']} {p['b_to_a_gbps']} Gb/s, "
          f"engine {p['engine']} ({p['engine_reason']}), wall {p['wall_seconds']} s, error '{p['error']}'")
print("  nodes:", [(n['name'], n.get('nccl_device', ''), n.get('nccl_note', '')) for n in j["nodes"]])
print("  verdict: exit_code", j["exit_code"], "summary", j["summary"], "findings", [f["id"] for f in j["findings"]])
PY
}

phase_cluster() {
  # NCCL's network transport between the two GPUs; its INFO log names the transport of each channel.
  cluster_pair nccl-socket nccl "${SOCKET_ENV[@]}" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
  grep -hoE "via NET/[A-Za-z]+[^ ]*|Using network [A-Za-z]+" "$L/nccl-socket.log" "$L/nccl-socket.rank1.err" 2>/dev/null |
    sort | uniq -c | tee -a "$L/summary.txt"
  cluster_pair nccl-socket-4x4 nccl "${SOCKET_ENV[@]}" NCCL_SOCKET_NTHREADS=4 NCCL_NSOCKS_PERTHREAD=4
  cluster_pair nccl-default nccl
  cluster_pair tcp-engine tcp
  # A build with the engine refuses nothing; a node without a GPU is reported, not measured.
  RANK1_GPU="" cluster_pair nccl-no-gpu-rank1 nccl "${SOCKET_ENV[@]}"
}

bench_alternating() {  # bench_alternating NAME ENVFILE PAIRS ARGS...: default / tuned processes alternating
  local name=$1 envfile=$2 pairs=$3 i order
  shift 3
  for ((i = 0; i < pairs; i++)); do
    for order in $([[ $((i % 2)) == 0 ]] && echo "default tuned" || echo "tuned default"); do
      if [[ $order == default ]]; then
        step "$name-$i-default" 120 env "${SOCKET_ENV[@]}" "$BIN" bench "$@"
      else
        step "$name-$i-tuned" 120 bash -c "set -a; . '$envfile'; set +a; exec env ${SOCKET_ENV[*]} '$BIN' bench $*"
      fi
    done
  done
  for f in "$L/$name"-*-default.log "$L/$name"-*-tuned.log; do
    echo "  $(basename "$f" .log): $(busbw "$f" | tr '\n' ' ')" | tee -a "$L/summary.txt"
  done
}

# The socket-path search: Simple only (LL and LL128 take 2-4x as long per large call on this path
# and are not what a 64 MiB-1 GiB all-reduce over a network wants), NCCL's count and 2 to 32
# channels, the socket settings and then the buffer on top.
TUNE_SPACE=(--protocols simple --channels -1,2,4,8,16,32)
TUNE_SIZES=1M,4M,16M,64M,256M,1G

phase_tune() {
  step tune-socket "${TUNE_LIMIT:-470}" env "${SOCKET_ENV[@]}" "$BIN" tune -g 2 --sizes "$TUNE_SIZES" "${TUNE_SPACE[@]}" \
    --env-settings socket,buffsize --env-pairs 3 --env-format shell -o "$WORK/tune-socket"
  grep -E "^tune: |NET/|speedup|bucket|both together|# " "$L/tune-socket.log" | head -60 | tee -a "$L/summary.txt"
  cat "$WORK/tune-socket/nccl_tuner.csv" "$WORK/tune-socket/tune.env" 2>/dev/null | tee -a "$L/summary.txt"
  [[ -f $WORK/tune-socket/tune.env ]] || return 1
  bench_alternating verify "$WORK/tune-socket/tune.env" "${VERIFY_PAIRS:-3}" -g 2 -b 1M -e 1G -f 4
}

# The values tune kept (socket threads, buffer), without the plugin lines.
kept_env() { grep -E '^(export )?NCCL_(SOCKET_NTHREADS|NSOCKS_PERTHREAD|BUFFSIZE|NTHREADS)=' "$WORK/tune-socket/tune.env" |
  sed "s/^export //; s/'//g"; }

rest_inputs() {
  local envfile=$WORK/tune-socket/tune.env table=$WORK/tune-socket/nccl_tuner.csv
  # A fresh machine: the tune phase's output brought back from an earlier call (same $WORK paths).
  [[ ! -f $envfile && -f ${CARRIED:-$ROOT/.devdeps/x2-carry}/tune-socket/tune.env ]] &&
    cp -r "${CARRIED:-$ROOT/.devdeps/x2-carry}/tune-socket" "$WORK/" && note "tune-socket: from an earlier call"
  [[ -f $envfile ]] || { note "no tune-socket/tune.env: run the tune phase first"; return 1; }
}

phase_ddp() {
  local envfile=$WORK/tune-socket/tune.env
  # 5. PyTorch DDP: default bucket / advised bucket under NCCL's defaults; NCCL's defaults / the tuned
  # table + environment (plugin) at the default bucket. Fresh torchrun per measurement, alternating.
  local advice
  advice=$(python3 -c "import json,sys; j=json.load(open('$WORK/tune-socket/tune.json')); a=[x for x in j.get('advice',[]) if x.get('bucket_cap_mb')]; print(a[0]['bucket_cap_mb'] if a else '')")
  note "bucket advice (tune.json): '${advice}'${DDP_ADVICE:+, overridden: $DDP_ADVICE}"
  advice=${DDP_ADVICE:-$advice}
  # DDP_CONFIGS: default (NCCL's defaults, bucket 25), advised (NCCL's defaults, the advice),
  # tuned (tune.env, bucket 25), tuned-advised (tune.env and the advice); rounds alternate order.
  local r cfg port configs=${DDP_CONFIGS:-default advised tuned}
  for ((r = 0; r < ${DDP_ROUNDS:-3}; r++)); do
    local order=$configs
    ((r % 2)) && order=$(tr ' ' '\n' <<<"$configs" | tac | tr '\n' ' ')
    for cfg in $order; do
      [[ $cfg == *advised && -z $advice ]] && continue
      port=$((31000 + RANDOM % 2000))
      local bucket=25 pre=""
      [[ $cfg == *advised ]] && bucket=$advice
      [[ $cfg == tuned* ]] && pre="set -a; . '$envfile'; set +a;"
      step "ddp-$r-$cfg" 150 bash -c "$pre exec env ${SOCKET_ENV[*]} torchrun --nproc_per_node=2 --master_port=$port \
        bench/ddp-step.py --bucket-cap-mb $bucket --iters 8 --warmup 3"
      grep -h "ddp-step:" "$L/ddp-$r-$cfg.log" | cut -c1-300 | tee -a "$L/summary.txt"
    done
  done
}

phase_choice() {
  local table=$WORK/tune-socket/nccl_tuner.csv
  # 3. NVIDIA's example tuner and fabscope's, the same table and environment: NCCL's per-call choice.
  # A table without rows shows nothing of either: then one written by a short tune over NVLink.
  local kept choice_table=$table path_env=("${SOCKET_ENV[@]}") sweep=(-b 1M -e 1G -f 2)
  kept=$(kept_env | tr '\n' ' ')
  if ! grep -qvE '^\s*(#|$)' "$table"; then
    step tune-nvlink 150 "$BIN" tune -g 2 --sizes 256K,4M,16M --no-env-search -o "$WORK/tune-nvlink"
    cat "$WORK/tune-nvlink/nccl_tuner.csv" | tee -a "$L/summary.txt"
    choice_table=$WORK/tune-nvlink/nccl_tuner.csv path_env=(NCCL_NVLS_ENABLE=0) sweep=(-b 64K -e 64M -f 2) kept=""
  fi
  for p in fabscope example example-fixed; do
    local so=$PLUGIN
    [[ $p == example ]] && so=$EXAMPLE
    [[ $p == example-fixed ]] && so=$EXAMPLE_FIXED
    step "choice-$p" 120 env "${path_env[@]}" $kept NCCL_TUNER_PLUGIN="$so" NCCL_TUNER_CONFIG_FILE="$choice_table" \
      NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING "$BIN" bench -g 2 "${sweep[@]}" -n 2 -w 1
    grep -oE "AllReduce: [0-9]+ Bytes -> Algo [A-Za-z_]+ proto [A-Za-z0-9_]+ channel\{Lo\.\.Hi\}=\{[0-9]+\.\.[0-9]+\}" \
      "$L/choice-$p.log" | sort -u | sort -t' ' -k2,2n >"$L/choice-$p.txt"
    grep -hE "TUNER/|tuner plugin" "$L/choice-$p.log" | sed 's/^.*NCCL INFO //' | sort -u | head -8 | tee -a "$L/summary.txt"
  done
  for p in example example-fixed; do
    note "choices fabscope vs $p: $(wc -l <"$L/choice-fabscope.txt") / $(wc -l <"$L/choice-$p.txt") distinct lines"
    diff "$L/choice-fabscope.txt" "$L/choice-$p.txt" >"$L/choice-diff-$p.txt" && note "  identical" ||
      { note "  differ:"; head -30 "$L/choice-diff-$p.txt" | tee -a "$L/summary.txt"; }
  done
}

phase_load() {
  local table=$WORK/tune-socket/nccl_tuner.csv kept
  kept=$(kept_env | tr '\n' ' ')
  # 2. The table searched under a 50% compute load (with tune's kept environment values set) against
  # the idle-searched table, both measured under the same load in alternating fresh processes.
  step tune-load "${LOAD_LIMIT:-400}" env "${SOCKET_ENV[@]}" $kept "$BIN" tune -g 2 --sizes 64M,256M,1G "${TUNE_SPACE[@]}" --compute-load 50 \
    --no-env-search --env-format shell -o "$WORK/tune-load"
  grep -E "speedup|idle|load" "$L/tune-load.log" | head -20 | tee -a "$L/summary.txt"
  cat "$WORK/tune-load/nccl_tuner.csv" | tee -a "$L/summary.txt"
  local spec i t
  for i in 0 1 2; do
    for t in $([[ $((i % 2)) == 0 ]] && echo "idle load" || echo "load idle"); do
      local tab=$table
      [[ $t == load ]] && tab=$WORK/tune-load/nccl_tuner.csv
      spec=$(printf '{"points":[{"collective":"all_reduce","bytes":67108864},{"collective":"all_reduce","bytes":268435456},{"collective":"all_reduce","bytes":1073741824}],"budget_s":0.5,"env":[],"simulate":false,"seed":0,"gpus":2,"plugin":"%s","table":"%s","compute_load_pct":50,"timeout_s":120}' "$PLUGIN" "$tab")
      step "under-load-$i-$t-table" 120 env "${SOCKET_ENV[@]}" $kept "$BIN" tune --env-worker "$spec"
      grep -h "fabscope-tune-worker:" "$L/under-load-$i-$t-table.log" | tee -a "$L/summary.txt"
    done
  done
}

phase_rest() { rest_inputs && { phase_ddp; phase_choice; phase_load; }; }

case $PHASE in
  build) phase_build ;;
  cluster) phase_build && phase_cluster ;;
  tune) phase_build && phase_tune ;;
  rest) phase_build && phase_rest ;;
  ddp | choice | load) phase_build && rest_inputs && "phase_$PHASE" ;;
  *) echo "usage: $0 build|cluster|tune|rest|ddp|choice|load" >&2; exit 3 ;;
esac
