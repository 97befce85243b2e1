#!/usr/bin/env bash
# The subnet collector against rdma-core's own diag tools on the same simulated fabric (ibsim +
# OpenSM, tests/integration/ibsim/harness.sh), through the driver program
# (tests/support/fabric_driver.cpp). One scenario per run, each with its own simulator:
#   inventory    nodes, GUIDs, LIDs, links with both ends = ibnetdiscover's; width/speed per link
#   linkinfo     links below what both ends support = iblinkinfo's "Could be"; active width/speed
#   errors       ports with error counters after PerformanceSet = ibqueryerrors'
#   routes       routes through the forwarding tables = ibtracert's, several pairs
#   lfts         every switch's forwarding table saved by the sweep = ibroute's; routes computed
#                from the saved file alone (no fabric) = ibtracert's, several pairs
#   lfts_fattree a generated 64-HCA fat tree: all 64*63 HCA routes compute from the saved tables,
#                and a sample of them (and HCA to switch) equals the live trace hop by hop
#   sms          SMInfo of every SM = sminfo's; with a second OpenSM one master and one standby
#   unreachable  a leaf cut off after discovery: its nodes are named in notes, the rest is read
#   killed       the simulator killed mid-sweep: a clear error, within the time limit
#   flood        1,024 counter MADs asked in flight on a 1,024-port fat tree: all read, no hang
# Usage: fabric_ibsim_test.sh SCENARIO DRIVER
set -euo pipefail
scenario=$1 driver=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
topo=$here/../fixtures/ibsim/leafspine.net
. "$here/ibsim/harness.sh"
sim_skip_unless_available
for t in ibnetdiscover iblinkinfo ibqueryerrors ibtracert ibroute sminfo; do
  command -v "$t" >/dev/null || { echo "SKIPPED: $t not installed (infiniband-diags)"; exit 77; }
done
compare() { python3 "$here/ibsim/compare.py" "$@"; }

host=H-node1
generated=
if [ "$scenario" = flood ]; then  # a generated fat tree: 16 leaves, 16 spines, 256 HCAs, 1,024 ports
  generated="16 16 16"
elif [ "$scenario" = lfts_fattree ]; then  # 8 leaves, 8 spines, 64 HCAs
  generated="8 8 8"
fi
if [ -n "$generated" ]; then
  topo=$(mktemp "${TMPDIR:-/tmp}/fattree.XXXXXX.net")
  python3 "$here/../../bench/fattree-topology.py" $generated >"$topo"
  host=H-l00-00
fi
sim_start "$topo"
[ -n "$generated" ] && rm -f "$topo"
sm_start "$host"
out=$SIM_DIR/out
mkdir -p "$out"

case $scenario in
inventory)
  sim_run H-node1 "$driver" sweep >"$out/driver"
  sim_run H-node1 ibnetdiscover >"$out/ibnetdiscover"
  sim_run H-node1 ibnetdiscover -p >"$out/ibnetdiscover-p"
  compare inventory "$out/driver" "$out/ibnetdiscover" "$out/ibnetdiscover-p"
  grep -q '^port 0x0000000000100004 1 .* 1x HDR ' "$out/driver" || { echo "FAIL: H-node3 not at 1X"; exit 1; }
  grep -q '^port 0x0000000000100008 1 .* 4x EDR ' "$out/driver" || { echo "FAIL: H-node5 not at EDR"; exit 1; }
  ;;
linkinfo)
  sim_run H-node1 "$driver" sweep --no-counters >"$out/driver"
  sim_run H-node1 iblinkinfo -l >"$out/iblinkinfo"
  compare linkinfo "$out/driver" "$out/iblinkinfo"
  ;;
errors)
  sim_cmd 'PerformanceSet "S-leaf1"[3] PortCounters.SymbolErrorCounter=55'
  sim_cmd 'PerformanceSet "S-spine2"[2] PortCounters.PortRcvErrors=7'
  sim_cmd 'PerformanceSet "S-spine2"[2] PortCounters.LinkDownedCounter=3'
  sim_cmd 'PerformanceSet "H-node5"[1] PortCounters.LinkErrorRecoveryCounter=2'
  sim_cmd 'PerformanceSet "H-node2"[1] PortCounters.ExcessiveBufferOverrunErrors=4'
  sim_run H-node1 "$driver" sweep >"$out/driver"
  sim_run H-node1 ibqueryerrors >"$out/ibqueryerrors" || true  # exits non-zero when it finds errors
  compare errors "$out/driver" "$out/ibqueryerrors"
  ;;
routes)
  # HCA to HCA across the spines, on the same leaf, to a switch, from a switch.
  pairs=("1 9" "1 6" "10 8" "2 5" "4 1")
  for p in "${pairs[@]}"; do
    set -- $p
    sim_run H-node1 "$driver" route "$1" "$2" >"$out/driver-$1-$2"
    sim_run H-node1 ibtracert "$1" "$2" >"$out/ibtracert-$1-$2"
    compare route "$out/driver-$1-$2" "$out/ibtracert-$1-$2"
  done
  # A LID no port has: the route breaks at the first switch, which is named.
  rc=0
  sim_run H-node1 "$driver" route 1 99 >"$out/driver-1-99" || rc=$?
  cat "$out/driver-1-99"
  [ "$rc" -eq 1 ] && grep -q '^error route to LID 99 breaks at switch S-leaf1 (0x0000000000200000): no forwarding entry' \
    "$out/driver-1-99" || { echo "FAIL: no error naming the switch for LID 99"; exit 1; }
  ;;
lfts)
  # The sweep reads every switch's table; from then on the saved file alone gives the routes.
  sim_run H-node1 "$driver" save "$out/fabric.json" --routes --no-counters >"$out/save"
  cat "$out/save"
  if grep -q '^error' "$out/save"; then exit 1; fi
  args=()
  for lid in $(python3 -c 'import json,sys
for n in json.load(open(sys.argv[1]))["nodes"]:
    if n["type"] == "switch": print(n["ports"][0]["info"]["lid"])' "$out/fabric.json"); do
    sim_run H-node1 ibroute "$lid" >"$out/ibroute-$lid"
    args+=("$out/ibroute-$lid")
  done
  compare lfts "$out/fabric.json" "${args[@]}"
  # HCA to HCA across the spines, on the same leaf, to a switch, from a switch: not attached to
  # the simulator at all (no LD_PRELOAD), the saved tables only.
  pairs=("1 9" "1 6" "10 8" "2 5" "4 1" "7 3")
  for p in "${pairs[@]}"; do
    set -- $p
    "$driver" offline-route "$out/fabric.json" "$1" "$2" >"$out/offline-$1-$2"
    sim_run H-node1 ibtracert "$1" "$2" >"$out/ibtracert-$1-$2"
    compare route "$out/offline-$1-$2" "$out/ibtracert-$1-$2"
  done
  rc=0
  "$driver" offline-route "$out/fabric.json" 1 99 >"$out/offline-1-99" || rc=$?
  cat "$out/offline-1-99"
  [ "$rc" -eq 1 ] && grep -q '^error route to LID 99 breaks at switch S-leaf1 (0x0000000000200000): no forwarding entry' \
    "$out/offline-1-99" || { echo "FAIL: no error naming the switch for LID 99"; exit 1; }
  "$driver" offline-all "$out/fabric.json" | tee "$out/offline-all"
  grep -q '^summary routes 30 errors 0 ' "$out/offline-all" || { echo "FAIL: not every HCA route computed"; exit 1; }
  ;;
lfts_fattree)
  sim_run H-l00-00 "$driver" save "$out/fabric.json" --routes --no-counters >"$out/save"
  cat "$out/save"
  "$driver" offline-all "$out/fabric.json" | tee "$out/offline-all"
  grep -q '^summary routes 4032 errors 0 ' "$out/offline-all" || { echo "FAIL: not all 64*63 routes computed"; exit 1; }
  # A sample: each of 8 HCAs (one per leaf, a different position on each) to 8 HCAs spread over
  # the leaves and to 2 switches; the offline routes must equal the live trace hop by hop.
  python3 - "$out/fabric.json" >"$out/sample" <<'PY'
import json, sys
nodes = json.load(open(sys.argv[1]))["nodes"]
lid = lambda n: n["ports"][0]["info"]["lid"]
hcas = sorted((n["description"].split()[0], lid(n)) for n in nodes if n["type"] == "hca")
sws = sorted((n["description"], lid(n)) for n in nodes if n["type"] == "switch")
for i in range(8):
    src = hcas[i * 8 + i][1]
    dsts = [hcas[(i * 9 + 7 * k + 3) % 64][1] for k in range(8)] + [sws[i][1], sws[8 + i][1]]
    print(src, *[d for d in dsts if d != src])
PY
  while read -r src dsts; do
    # shellcheck disable=SC2086
    sim_run H-l00-00 "$driver" route "$src" $dsts >"$out/live-$src" || true
    # shellcheck disable=SC2086
    "$driver" offline-route "$out/fabric.json" "$src" $dsts >"$out/offline-$src" || true
    diff -u "$out/live-$src" "$out/offline-$src" || { echo "FAIL: offline routes from LID $src differ from the live trace"; exit 1; }
    if grep '^error' "$out/offline-$src"; then echo "FAIL: a route from LID $src broke"; exit 1; fi
    echo "OK LID $src: $(grep -c '^route' "$out/offline-$src") routes equal the live trace"
  done <"$out/sample"
  ;;
sms)
  sim_run H-node1 "$driver" sweep --no-counters >"$out/driver-1"
  sim_run H-node1 sminfo >"$out/sminfo-1"
  compare sms "$out/driver-1" "$out/sminfo-1"
  # A second OpenSM with a higher priority: usually it takes MASTER and the first goes STANDBY;
  # when it finds the master first it may stay STANDBY itself. Either way the fabric ends with
  # one master and one standby: sweep until it shows that (60 s at most).
  sm_start H-node4 -p 10
  end=$((SECONDS + 60))
  until sim_run H-node1 "$driver" sweep --no-counters >"$out/driver-2" &&
        [ "$(awk '$1 == "sm" { print $5 }' "$out/driver-2" | sort | tr '\n' ' ')" = "MASTER STANDBY " ]; do
    if [ $SECONDS -ge $end ]; then
      echo "FAIL: no master and standby within 60 s"
      grep -E '^(sm|error|access-error|note)' "$out/driver-2" || true
      grep -H 'Entering\|SUBNET UP' "$SIM_DIR"/sm-*/opensm.log || true
      exit 1
    fi
  done
  args=()
  for lid in $(awk '$1 == "sm" { print $3 }' "$out/driver-2"); do
    sim_run H-node1 sminfo "$lid" >"$out/sminfo-2-$lid"
    args+=("$out/sminfo-2-$lid")
  done
  compare sms "$out/driver-2" "${args[@]}"
  [ "$(awk '$1 == "sm" && $5 == "MASTER"' "$out/driver-2" | wc -l)" -eq 1 ] || { echo "FAIL: not one master"; exit 1; }
  [ "$(awk '$1 == "sm" && $5 == "STANDBY"' "$out/driver-2" | wc -l)" -eq 1 ] || { echo "FAIL: not one standby"; exit 1; }
  echo "OK one master, one standby"
  ;;
unreachable)
  # Discovery sees the whole fabric; then S-leaf2 loses both uplinks before the counters are read.
  coproc DRV { sim_run H-node1 "$driver" pause --timeout-ms 50 --retries 1; }
  pid=$DRV_PID  # bash unsets DRV_PID when the coprocess ends
  read -r -t 30 ready <&"${DRV[0]}" || { echo "FAIL: the driver did not finish discovery"; exit 1; }
  echo "$ready"
  sim_cmd 'Unlink "S-leaf2"[7]'
  sim_cmd 'Unlink "S-leaf2"[8]'
  echo go >&"${DRV[1]}"
  timeout 60 cat <&"${DRV[0]}" >"$out/driver" || true
  wait "$pid" || { echo "FAIL: the driver failed"; cat "$out/driver"; exit 1; }
  cat "$out/driver" | grep -v '^counter' || true
  for g in 0x0000000000200001 0x0000000000100006 0x0000000000100008 0x000000000010000a; do
    grep -q "^portnote $g .*counters not read: no PerfMgt answer" "$out/driver" || { echo "FAIL: $g not named"; exit 1; }
  done
  grep -q '^note S-leaf2: counters not read' "$out/driver" || { echo "FAIL: no sweep note for S-leaf2"; exit 1; }
  for g in 0x0000000000200000 0x0000000000200002 0x0000000000100000 0x0000000000100004; do
    grep -q "^counter $g .* SymbolErrorCounter " "$out/driver" || { echo "FAIL: $g not read"; exit 1; }
  done
  echo "OK the cut-off leaf is named, the sweep went on"
  ;;
killed)
  coproc DRV { sim_run H-node1 "$driver" pause --timeout-ms 100 --retries 2; }
  pid=$DRV_PID
  read -r -t 30 ready <&"${DRV[0]}" || { echo "FAIL: the driver did not finish discovery"; exit 1; }
  echo "$ready"
  sim_kill
  echo go >&"${DRV[1]}"
  timeout 60 cat <&"${DRV[0]}" >"$out/driver" || true
  rc=0
  wait "$pid" || rc=$?
  cat "$out/driver"
  [ "$rc" -eq 1 ] || { echo "FAIL: the driver exited $rc, not 1 (an Error)"; exit 1; }
  grep -Eq '^error .*(went away|stopped answering)' "$out/driver" || { echo "FAIL: no clear error"; exit 1; }
  echo "OK a clear error when the simulator went away"
  ;;
flood)
  # Far more counter MADs asked in flight than the engine sends (256): every answer must still be
  # taken in while requests go out, or the simulator's socket fills both ways and both sides wait.
  sim_run H-l00-00 "$driver" sweep --max-inflight 1024 >"$out/driver"
  grep '^summary' "$out/driver"
  ports=$(awk '$1 == "counter" && $4 == "SymbolErrorCounter"' "$out/driver" | wc -l)
  [ "$ports" -eq 1024 ] || { echo "FAIL: counters of $ports ports, not 1024"; exit 1; }
  if grep -q '^portnote' "$out/driver"; then echo "FAIL: ports not read"; grep '^portnote' "$out/driver" | head; exit 1; fi
  echo "OK the counters of all 1024 ports with 1024 asked in flight"
  ;;
*)
  echo "unknown scenario $scenario" >&2; exit 3 ;;
esac
