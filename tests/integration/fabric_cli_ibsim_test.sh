#!/usr/bin/env bash
# `fabscope fabric` itself (the real binary, its judgements and exit codes) on a simulated fabric
# (ibsim + OpenSM, tests/integration/ibsim/harness.sh; tests/fixtures/ibsim/leafspine.net has a
# 1X link to H-node3 and an EDR link to H-node5 among 4X HDR links). Each fault must produce its
# finding, on the link it belongs to, and the finding must clear when the fault is removed.
#   links    the 1X and the EDR link are degraded (warn, exit 1); one SM: no standby
#   errors   PerformanceSet symbol errors on a spine port: fabric.error_counters on that cable;
#            set back to 0: gone
#   expect   --save, then Unlink a spine cable: --expect names the missing link (exit 1 or 2);
#            ReLink: the link is back and the finding clears
#   sms      a second OpenSM as standby clears fabric.sm_no_standby
#   route    `fabric route` hop by hop equals ibtracert's nodes and ports, and the same route
#            computed from a sweep saved with --routes (no fabric) equals it
#   heldout  issue 45's defects on tests/fixtures/ibsim/dualport.net (a dual-port HCA with a port
#            on each of two ToRs under an aggregation switch; a cable moved onto a 4X QDR port):
#            the route from one port of H-dual to the other equals ibtracert's 4 hops, live and
#            from the saved tables, and says "4 hop(s)"; the QDR link is fabric.link_mixed_speed
#            naming the limit, not fabric.link_degraded; --max-inflight above 256 exits 3
# Usage: fabric_cli_ibsim_test.sh SCENARIO FABSCOPE
set -euo pipefail
scenario=$1 fabscope=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ibsim/harness.sh"
sim_skip_unless_available
topology=leafspine.net host=H-node1
[ "$scenario" = heldout ] && topology=dualport.net host=H-a
sim_start "$here/../fixtures/ibsim/$topology"
sm_start "$host"
out=$SIM_DIR/out
mkdir -p "$out"

fail() { echo "FAIL: $*"; exit 1; }
# fabric NAME ARGS...: `fabscope fabric --json ARGS` attached at H-node1 into $out/NAME.json;
# prints its exit code (0-2 are verdicts; 3 or a signal fails the test).
fabric() {
  local name=$1 rc=0; shift
  sim_run "$host" "$fabscope" fabric --json "$@" >"$out/$name.json" 2>"$out/$name.err" || rc=$?
  if [ $rc -ge 3 ]; then
    echo "fabscope fabric $* exited $rc:" >&2; cat "$out/$name.err" >&2; fail "fabric $name"
  fi
  echo $rc
}
# findings NAME: one line per finding of $out/NAME.json, "id severity subject"
findings() {
  python3 - "$out/$1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "fabscope.fabric", d["schema"]
for f in d["findings"]:
    print(f["id"], f["severity"], f["subject"])
PY
}
# like_ibtracert ROUTE.json IBTRACERT.txt: the route's nodes and out ports are ibtracert's.
like_ibtracert() {
  python3 - "$1" "$2" <<'PY'
import json, re, sys
hops = json.load(open(sys.argv[1]))["hops"]
ours = [(h["name"], h["out_port"]) for h in hops]
lines = open(sys.argv[2]).read().splitlines()
names = []
for l in lines:  # the destination is named twice: on the last hop and on the "To ca" line
    m = re.search(r'"([^"]*)"', l)
    if m and (not names or names[-1] != m.group(1)):
        names.append(m.group(1))
outs = [int(m.group(1)) for l in lines for m in [re.match(r'\[(\d+)\] ->', l.strip())] if m]
ours_names = [n for n, _ in ours]
assert ours_names == names, ("nodes", ours_names, names)
assert [o for _, o in ours[:-1]] == outs, ("out ports", ours, outs)
print("route:", " -> ".join(f"{n}[{o}]" for n, o in ours))
PY
}
has() {  # has NAME ID SUBJECT-REGEX (the list first: grep -q leaves early, and under pipefail the
  local list                   # writer's broken pipe would fail the pipeline)
  list=$(findings "$1")
  grep -Eq "^$2 [a-z]+ $3\$" <<<"$list"
}

case $scenario in
links)
  rc=$(fabric links)
  findings links | sed 's/^/  /'
  [ "$rc" = 1 ] || fail "exit $rc, expected 1 (warnings)"
  has links fabric.link_degraded '.*H-node3.*' || fail "the 1X link to H-node3 is not degraded"
  has links fabric.link_degraded '.*H-node5.*' || fail "the EDR link to H-node5 is not degraded"
  n=$(findings links | grep -c '^fabric.link_degraded ' || true)
  [ "$n" = 2 ] || fail "$n degraded links, expected 2"
  has links fabric.sm_no_standby '.*' || fail "one SM and no fabric.sm_no_standby"
  # The human output fits 100 columns and names the degraded cable.
  sim_run H-node1 "$fabscope" fabric >"$out/links.txt" || true
  grep -q 'H-node3' "$out/links.txt" || fail "text output does not name H-node3"
  awk 'length > 100 { print "line " NR " is " length " columns: " $0; bad = 1 } END { exit bad }' "$out/links.txt" ||
    fail "text output wider than 100 columns"
  ;;
errors)
  rc=$(fabric before)
  has before fabric.error_counters '.*' && fail "error counters before any fault"
  sim_cmd 'PerformanceSet "S-spine2"[2] PortCounters.SymbolErrorCounter=1234'
  rc=$(fabric fault)
  findings fault | sed 's/^/  /'
  has fault fabric.error_counters '.*S-spine2:2.*' || fail "no fabric.error_counters on the S-spine2:2 cable"
  grep -q 'SymbolErrorCounter' "$out/fault.json" || fail "the evidence does not name SymbolErrorCounter"
  sim_cmd 'PerformanceSet "S-spine2"[2] PortCounters.SymbolErrorCounter=0'
  rc=$(fabric cleared)
  has cleared fabric.error_counters '.*' && fail "fabric.error_counters still there after the counter went back to 0"
  ;;
expect)
  sim_run H-node1 "$fabscope" fabric --save "$out/base.json" >/dev/null || true
  [ -s "$out/base.json" ] || fail "--save wrote nothing"
  rc=$(fabric same --expect "$out/base.json")
  has same 'fabric.link_missing' '.*' && fail "a link missing against the fabric's own saved sweep"
  sim_cmd 'Unlink "S-spine2"[2]'
  rc=$(fabric cut --expect "$out/base.json")
  findings cut | sed 's/^/  /'
  [ "$rc" -ge 1 ] || fail "exit $rc with a missing cable, expected a warning or failure"
  has cut fabric.link_missing '.*S-spine2:2.*' || fail "the unlinked S-spine2:2 cable is not missing"
  sim_cmd 'ReLink "S-spine2"[2]'
  # The link is back when its ports train again; OpenSM brings them to Active on its next sweep.
  # Poll under a deadline, never a fixed sleep.
  end=$((SECONDS + 90))
  while :; do
    rc=$(fabric back --expect "$out/base.json")
    has back fabric.link_missing '.*' || break
    [ $SECONDS -lt $end ] || { findings back; fail "link still missing 90 s after ReLink"; }
    sleep 1
  done
  ;;
sms)
  rc=$(fabric one)
  has one fabric.sm_no_standby '.*' || fail "one SM and no fabric.sm_no_standby"
  sm_start H-node4 -p 1
  # While the two SMs negotiate, a sweep can catch both in STANDBY (or DISCOVERING): sweep until
  # the fabric shows one master and one standby, 120 s at most, then judge that sweep.
  settled() {
    python3 - "$out/two.json" <<'PY'
import json, sys
sms = json.load(open(sys.argv[1]))["sms"]
sys.exit(0 if sorted(s["state"] for s in sms) == ["MASTER", "STANDBY"] else 1)
PY
  }
  end=$((SECONDS + 120))
  while :; do
    rc=$(fabric two)
    settled && break
    [ $SECONDS -lt $end ] || { findings two; tail -20 "$SIM_DIR"/sm-*/opensm.log; fail "no master and standby within 120 s of the second SM"; }
    sleep 1
  done
  has two fabric.sm_no_standby '.*' && { findings two; fail "fabric.sm_no_standby with a standby SM"; }
  has two fabric.sm_multiple_masters '.*' && fail "two masters reported"
  ;;
route)
  # The forwarding tables saved once (--routes): the same routes computed from the file alone.
  rc=0
  sim_run H-node1 "$fabscope" fabric --routes --save "$out/saved.json" >"$out/saved.txt" 2>&1 || rc=$?
  [ $rc -le 2 ] || { cat "$out/saved.txt"; fail "fabric --routes --save exited $rc"; }
  for pair in "H-node1 H-node6" "H-node3 H-node5" "H-node2 S-spine1"; do
    set -- $pair
    sim_run H-node1 "$fabscope" fabric route --json "$1" "$2" >"$out/route.json"
    "$fabscope" fabric route --json --from "$out/saved.json" "$1" "$2" >"$out/route-saved.json"
    cmp -s "$out/route.json" "$out/route-saved.json" || {
      diff "$out/route.json" "$out/route-saved.json"; fail "$1 -> $2 from the saved tables differs from the live trace"; }
    sim_run H-node1 "$fabscope" fabric route "$1" "$2" >"$out/route.txt"
    read -r slid dlid < <(python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["hops"]; print(h[0]["lid"], h[-1]["lid"])' "$out/route.json")
    sim_run H-node1 ibtracert "$slid" "$dlid" >"$out/ibtracert" 2>&1 || fail "ibtracert $slid $dlid: $(cat "$out/ibtracert")"
    # ibtracert: 'From ca {0x...} portnum 1 lid 5-5 "H-node1"', '[1] -> switch port {0x...}[3] lid 1-1 "S-leaf1"', ...
    like_ibtracert "$out/route.json" "$out/ibtracert"
    grep -q "$2" "$out/route.txt" || fail "the text route does not name $2"
  done
  ;;
heldout)
  rc=0
  sim_run "$host" "$fabscope" fabric --routes --save "$out/saved.json" >"$out/saved.txt" 2>&1 || rc=$?
  [ $rc -le 2 ] || { cat "$out/saved.txt"; fail "fabric --routes --save exited $rc"; }
  # H-dual's two ports: LIDs and port GUIDs as the sweep saved them (OpenSM assigns the LIDs).
  read -r lid1 lid2 guid1 < <(python3 - "$out/saved.json" <<'PY'
import json, sys
node = next(n for n in json.load(open(sys.argv[1]))["nodes"] if n["description"] == "H-dual")
ports = {p["number"]: p for p in node["ports"]}
print(ports[1]["info"]["lid"], ports[2]["info"]["lid"], ports[1]["guid"])
PY
)
  # (a) one port to the other, by LIDs both ways and from the port GUID: ibtracert's 4 hops
  # through S-tor1, S-agg1 and S-tor2, live and from the saved tables; (b) "4 hop(s)".
  for pair in "$lid1 $lid2" "$lid2 $lid1" "$guid1 $lid2"; do
    set -- $pair
    sim_run "$host" "$fabscope" fabric route --json "$1" "$2" >"$out/route.json" || fail "fabric route $1 $2"
    "$fabscope" fabric route --json --from "$out/saved.json" "$1" "$2" >"$out/route-saved.json" ||
      fail "fabric route --from $1 $2"
    cmp -s "$out/route.json" "$out/route-saved.json" || {
      diff "$out/route.json" "$out/route-saved.json"; fail "$1 -> $2 from the saved tables differs from the live trace"; }
    src=$1
    [ "$src" = "$guid1" ] && src=$lid1
    sim_run "$host" ibtracert "$src" "$2" >"$out/ibtracert" 2>&1 || fail "ibtracert $src $2: $(cat "$out/ibtracert")"
    like_ibtracert "$out/route.json" "$out/ibtracert"
    n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["hops"]))' "$out/route.json")
    [ "$n" = 5 ] || fail "$1 -> $2: $n nodes on the route, ibtracert has 5 (4 hops)"
    sim_run "$host" "$fabscope" fabric route "$1" "$2" >"$out/route.txt"
    "$fabscope" fabric route --from "$out/saved.json" "$1" "$2" >"$out/route-saved.txt"
    for t in route.txt route-saved.txt; do
      grep -q "Route from H-dual to H-dual: 4 hop(s)" "$out/$t" || { cat "$out/$t"; fail "$t: the header does not say 4 hop(s)"; }
    done
  done
  # (c) the cable on the QDR port runs at the best both ends can do: mixed speed, not degraded.
  rc=$(fabric moved)
  findings moved | sed 's/^/  /'
  [ "$rc" = 1 ] || fail "exit $rc, expected 1 (warnings)"
  has moved fabric.link_mixed_speed '.*H-moved.*' || fail "the QDR link to H-moved is not fabric.link_mixed_speed"
  has moved fabric.link_degraded '.*' && fail "a link called degraded: every link runs at the best its ends can do"
  python3 - "$out/moved.json" <<'PY' || fail "the finding does not name the limit or says reseat"
import json, sys
f = next(f for f in json.load(open(sys.argv[1]))["findings"] if f["id"] == "fabric.link_mixed_speed")
assert "at most QDR" in f["message"], f["message"]
assert "reseat" not in f["remedy"], f["remedy"]
assert "move it back" in f["remedy"], f["remedy"]
PY
  # (d) --max-inflight: 256 is the engine's limit, more is refused naming the range.
  rc=0
  sim_run "$host" "$fabscope" fabric --max-inflight 1024 >"$out/over.txt" 2>&1 || rc=$?
  [ $rc = 3 ] || fail "--max-inflight 1024 exited $rc, expected 3"
  grep -q "from 1 to 256" "$out/over.txt" || { cat "$out/over.txt"; fail "--max-inflight 1024: the range is not named"; }
  rc=$(fabric most --max-inflight 256)
  [ "$rc" = 1 ] || fail "--max-inflight 256 exited $rc, expected 1 as without it"
  ;;
*) echo "unknown scenario '$scenario'" >&2; exit 3 ;;
esac
echo "ok: fabric $scenario"
