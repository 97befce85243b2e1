#!/usr/bin/env bash
# Lints one exposition of the exporter in each mode with `promtool check metrics` (names, units,
# help, types) and checks that every family has HELP and TYPE:
#   node    the real procfs capture (FIXTURE_TTAR) under --root, --once;
#   fabric  --fabric --once on a simulated InfiniBand fabric (ibsim + OpenSM,
#           tests/integration/ibsim/harness.sh, tests/fixtures/ibsim/leafspine.net), the tick length
#           given so every fabric family is there; exit 77 without the simulator;
#   mesh    two exporters with --mesh probing each other on loopback, each scraped once both
#           answer (RTT histograms, counters and verdicts there).
# Every wait polls under a deadline.
# Usage: exporter_check_metrics.sh node FABSCOPE PROMTOOL FIXTURE_TTAR
#        exporter_check_metrics.sh fabric|mesh FABSCOPE PROMTOOL
set -euo pipefail
mode=$1 fabscope=$(realpath "$2") promtool=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd)

# lint FILE MIN_FAMILIES: promtool clean, a HELP for every TYPE, at least MIN_FAMILIES families.
lint() {
  local file=$1 min=$2 families helps
  "$promtool" check metrics <"$file"
  families=$(grep -c '^# TYPE ' "$file")
  helps=$(grep -c '^# HELP ' "$file")
  [ "$families" -ge "$min" ] || { echo "FAIL: only $families families in $file"; exit 1; }
  [ "$families" -eq "$helps" ] || { echo "FAIL: $families TYPE lines but $helps HELP lines in $file"; exit 1; }
  echo "ok: $mode: $families families, $(grep -vc '^#' "$file") samples, promtool clean"
}

# has FILE REGEX WHAT: the exposition holds a line matching REGEX.
has() { grep -Eq "$2" "$1" || { echo "FAIL: $3 (no line matching '$2' in $1)"; exit 1; }; }

case $mode in
node)
  archive=$4
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 "$here/../support/ttar.py" "$archive" "$work/root"
  "$fabscope" exporter --once --checks-interval 0 --root "$work/root" >"$work/metrics.txt"
  lint "$work/metrics.txt" 21
  ;;

fabric)
  . "$here/ibsim/harness.sh"
  sim_skip_unless_available
  sim_start "$here/../fixtures/ibsim/leafspine.net"
  sm_start H-node1
  # The first collection runs before --once renders, so the whole fabric is in this one exposition.
  LD_PRELOAD=$UMAD2SIM SIM_HOST=H-node1 timeout 120 "$fabscope" exporter --once --checks-interval 0 \
    --fabric --fabric-xmit-wait-tick-ns 64 >"$SIM_DIR/metrics.txt" 2>"$SIM_DIR/exporter.log" ||
    { echo "FAIL: exporter --fabric --once"; cat "$SIM_DIR/exporter.log"; exit 1; }
  has "$SIM_DIR/metrics.txt" '^fabscope_fabric_links 10$' "the simulated fabric's 10 cables"
  has "$SIM_DIR/metrics.txt" '^fabscope_fabric_link_rate_bytes_per_second\{' "link rates"
  has "$SIM_DIR/metrics.txt" '^fabscope_fabric_port_transmit_wait_ticks_total\{' "PortXmitWait"
  has "$SIM_DIR/metrics.txt" '^fabscope_fabric_transmit_wait_tick_seconds 6.4e-08$' "the tick length"
  lint "$SIM_DIR/metrics.txt" 50
  ;;

mesh)
  work=$(mktemp -d)
  pids=()
  stop_all() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
  }
  trap stop_all EXIT
  free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
  # scrape N FILE: node N's /metrics into FILE (false while it does not answer).
  scrape() {
    python3 - "${http[$1]}" "$2" <<'PY'
import sys, urllib.request
try:
    body = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read()
except Exception:
    sys.exit(1)
open(sys.argv[2], "wb").write(body)
PY
  }
  http=() meshp=()
  for n in 0 1; do
    http+=("$(free_port)")
    meshp+=("$(free_port)")
  done
  printf '127.0.0.1:%s\n' "${meshp[@]}" >"$work/peers.txt"
  for n in 0 1; do
    # A loaded 2-core test machine stalls processes for longer than a network would.
    FABSCOPE_MESH_TOKEN=check-metrics-0123456789 FABSCOPE_ROOT= "$fabscope" exporter \
      --listen "127.0.0.1:${http[$n]}" --checks-interval 0 --mesh --mesh-listen "127.0.0.1:${meshp[$n]}" \
      --mesh-peers "$work/peers.txt" --mesh-rate 20 --mesh-timeout-ms 2000 >"$work/exporter$n.log" 2>&1 &
    pids+=($!)
  done
  for n in 0 1; do
    end=$((SECONDS + 60))
    # Up, and a probe answered: the verdict, counters and RTT histogram of the peer are there.
    until scrape "$n" "$work/metrics$n.txt" && grep -Eq '^fabscope_mesh_peer_up\{.*\} 1$' "$work/metrics$n.txt"; do
      if [ $SECONDS -ge $end ] || ! kill -0 "${pids[$n]}" 2>/dev/null; then
        echo "FAIL: node $n has no answered peer after 60 s"; cat "$work/exporter$n.log"; exit 1
      fi
      sleep 0.3
    done
    has "$work/metrics$n.txt" '^fabscope_mesh_rtt_seconds_bucket\{' "node $n's RTT histogram"
    has "$work/metrics$n.txt" '^fabscope_mesh_responder_probes_total\{' "node $n's responder counters"
    lint "$work/metrics$n.txt" 20
  done
  ;;

*)
  echo "usage: $0 node|fabric|mesh FABSCOPE PROMTOOL [FIXTURE_TTAR]" >&2
  exit 3
  ;;
esac
