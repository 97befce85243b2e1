#!/usr/bin/env bash
# `fabscope cluster --from RESULT --fabric FABRIC` names the cable or switch the slow pairs share,
# on routes a real OpenSM programmed into a simulated fat tree (ibsim, 4 leaves x 4 spines, 16
# HCAs; tests/integration/ibsim/harness.sh). The pair matrix is synthesized with rdma-core's own
# route tracer as the ground truth: for 8 hosts (2 per leaf), every ordered pair is traced with
# `ibtracert`, and a direction is slowed (x0.4) when its traced route crosses the fault. fabscope
# only sees the saved sweep (`fabric --routes --save`) and the matrix.
#   cable    both directions of the leaf-spine cable the traced routes cross most:
#            cluster.slow_fabric_link names that cable, alone
#   fibre    one direction of it only: named as that direction
#   switch   every route through one spine: cluster.slow_switch names the spine
#   live     `fabscope cluster --fabric-from 1` under the env contract: three ranks on this machine,
#            each reading a copy of the soft-RoCE capture whose rxe0 port is made an InfiniBand
#            port with a simulated host's LID and GUID; rank 1 runs attached to the simulator and
#            sweeps; rank 0 places every rank and routes all 6 directions. Then rank 2 sweeps
#            without access: rank 0 says why, the run still ends with its verdict.
#   input    bad input: a result that is not JSON, a field of the wrong type, a fabric without
#            forwarding tables (exit 3 with the file and field, or "not located" with the remedy)
# Usage: cluster_localize_ibsim_test.sh SCENARIO FABSCOPE
set -euo pipefail
scenario=$1 fabscope=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ibsim/harness.sh"
sim_skip_unless_available
command -v ibtracert >/dev/null || { echo "SKIPPED: ibtracert not installed (infiniband-diags)"; exit 77; }
topo=$(mktemp "${TMPDIR:-/tmp}/fattree.XXXXXX.net")
python3 "$here/../../bench/fattree-topology.py" 4 4 4 >"$topo"
sim_start "$topo"
rm -f "$topo"
sm_start H-l00-00
out=$SIM_DIR/out
mkdir -p "$out"
fail() {
  echo "FAIL: $*"
  for f in "$out"/loc-*.txt; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done
  exit 1
}

# Exit 0-2 are verdicts on the fabric (the simulator's links read as below capability); 3 is an error.
rc=0
sim_run H-l00-00 "$fabscope" fabric --routes --save "$out/fabric.json" >/dev/null 2>"$out/fabric.err" || rc=$?
[ $rc -le 2 ] || { cat "$out/fabric.err"; fail "fabric --routes --save exited $rc"; }

# The 8 hosts, their LIDs and node GUIDs from the saved sweep (what each node's probe would report).
python3 - "$out/fabric.json" >"$out/hosts" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for n in d["nodes"]:
    name = n["description"]
    if n["type"] == "hca" and name[-2:] in ("00", "01"):
        lid = next(p["info"]["lid"] for p in n["ports"] if p.get("info") and p["info"].get("lid"))
        print(name, lid, n["guid"])
PY
[ "$(wc -l <"$out/hosts")" = 8 ] || { cat "$out/hosts"; fail "expected 8 hosts"; }
mapfile -t lids < <(awk '{print $2}' "$out/hosts")
: >"$out/traces"
for s in "${lids[@]}"; do
  for d in "${lids[@]}"; do
    [ "$s" = "$d" ] && continue
    { echo "== $s $d"; sim_run H-l00-00 ibtracert "$s" "$d"; } >>"$out/traces"
  done
done

# synth FAULT: the fabscope.cluster document, slowing the directions whose traced route matches.
# Its nodes carry every key today's writer writes (an empty tor_switch: no LLDP neighbour reported;
# a file without the key is read as one written before nodes reported it).
synth() {
  python3 - "$out/hosts" "$out/traces" "$1" "$out/expect-$1" >"$out/run-$1.json" <<'PY'
import json, random, re, sys
hosts = [l.split() for l in open(sys.argv[1])]
fault = sys.argv[3]
lid_rank = {int(h[1]): i for i, h in enumerate(hosts)}
# Cables as ibtracert prints them: (node, out port, next node, in port).
routes, cur = {}, None
for line in open(sys.argv[2]):
    m = re.match(r"== (\d+) (\d+)", line)
    if m:
        cur = (lid_rank[int(m.group(1))], lid_rank[int(m.group(2))])
        routes[cur], node = [], None
        continue
    m = re.match(r'^From \w+ \{0x[0-9a-f]+\} portnum \d+ lid [\d-]+ "(.*)"', line)
    if m:
        node = m.group(1)
        continue
    m = re.match(r'^\[(\d+)\] -> \w+ port \{0x[0-9a-f]+\}\[(\d+)\] lid [\d-]+ "(.*)"', line)
    if m:
        routes[cur].append((node, int(m.group(1)), m.group(3), int(m.group(2))))
        node = m.group(3)
assert len(routes) == 56 and all(routes.values()), "every ordered pair traced"
# The fault: the leaf-to-spine cable the traced routes cross most (ties: the first by name), so
# that enough measured directions cross it; its name as fabscope prints both directions.
count = {}
for hops in routes.values():
    for h in hops:
        if h[0].startswith("S-leaf") and h[2].startswith("S-spine"):
            count[h] = count.get(h, 0) + 1
up = sorted(count, key=lambda h: (-count[h], h))[0]
down = (up[2], up[3], up[0], up[1])
names = {"cable": f"{up[0]}:{up[1]} <-> {up[2]}:{up[3]}", "fibre": f"{up[0]}:{up[1]} -> {up[2]}:{up[3]}",
         "switch": "S-spine01"}
open(sys.argv[4], "w").write(names.get(fault, "") + "\n")
def slow(hops):
    if fault == "cable":
        return up in hops or down in hops
    if fault == "fibre":
        return up in hops
    if fault == "switch":
        return any(h[2] == "S-spine01" for h in hops)
    return False
rng = random.Random(7)
pairs = []
for a in range(8):
    for b in range(a + 1, 8):
        ab = 100 * rng.gauss(1, 0.02) * (0.4 if slow(routes[(a, b)]) else 1)
        ba = 100 * rng.gauss(1, 0.02) * (0.4 if slow(routes[(b, a)]) else 1)
        pairs.append({"a": a, "b": b, "a_to_b_gbps": ab, "b_to_a_gbps": ba, "engine": "rdma",
                      "engine_reason": "", "wall_seconds": 4.1, "error": ""})
nslow = sum(1 for k, hops in routes.items() if slow(hops))
print(f"synth {fault}: {nslow} of {len(routes)} directions cross the fault", file=sys.stderr)
nodes = [{"rank": i, "name": h[0].split()[0], "fabscope_version": "t", "pair_address": "", "rdma_address": "",
          "rdma_note": "", "error": "", "findings": [], "tor_switch": "", "tor_port": "",
          "ib_ports": [{"port": "mlx5_0:1", "lid": int(h[1]), "node_guid": h[2], "state": "ACTIVE"}]}
         for i, h in enumerate(hosts)]
print(json.dumps({"schema": "fabscope.cluster", "schema_version": 1, "launcher": "env", "world": 8,
                  "nodes": nodes, "pairwise": {"mode": "all", "engine": "rdma", "pairs": pairs}}))
PY
}
# locate FAULT: runs fabscope on it; the last line: exit, first suspect kind, name, finding ids (tabs).
locate() {
  local rc=0
  "$fabscope" cluster --from "$out/run-$1.json" --fabric "$out/fabric.json" --json >"$out/loc-$1.json" || rc=$?
  "$fabscope" cluster --from "$out/run-$1.json" --fabric "$out/fabric.json" >"$out/loc-$1.txt" || true
  cat "$out/loc-$1.txt" >&2
  python3 - "$out/loc-$1.json" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["localization"]["suspects"]
print("\t".join([sys.argv[2], s[0]["kind"] if s else "-", s[0]["name"] if s else "-",
                 ",".join(sorted(f["id"] + "=" + f["subject"] for f in d["findings"]))]))
PY
}

case $scenario in
cable | fibre | switch)
  synth "$scenario"
  expect=$(cat "$out/expect-$scenario")
  IFS=$'\t' read -r rc kind name ids < <(locate "$scenario" | tail -1)
  want_kind=cable want_id=cluster.slow_fabric_link
  [ "$scenario" = switch ] && want_kind=switch want_id=cluster.slow_switch
  [ "$kind" = "$want_kind" ] && [ "$name" = "$expect" ] || fail "first suspect $kind '$name', expected '$expect'"
  [ "$ids" = "$want_id=$expect" ] || fail "findings '$ids', expected $want_id on '$expect' alone"
  [ "$rc" = 1 ] || fail "exit $rc, expected 1 (a warning)"
  if [ "$scenario" = fibre ]; then
    grep -q "(this direction)" "$out/loc-fibre.json" || fail "not named as one direction"
  fi
  ;;
live)
  src=$(cd "$here/../fixtures/rxe-vm" && pwd)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  run_ranks() {  # run_ranks SWEEPER: three ranks, rank 1 attached to the simulator
    local pids=() r rc codes=()
    for r in 0 1 2; do
      set -- $(sed -n "$((r * 3 + 1))p" "$out/hosts")  # H-l00-00, H-l01-00, H-l02-00 (2 per leaf)
      rm -rf "$out/root$r"; mkdir -p "$out/root$r"
      cp -a "$src/proc" "$src/sys" "$out/root$r/"
      echo "n$r" >"$out/root$r/proc/sys/kernel/hostname"
      dev=$out/root$r/sys/devices/virtual/infiniband/rxe0
      echo InfiniBand >"$dev/ports/1/link_layer"
      printf '0x%x\n' "$2" >"$dev/ports/1/lid"
      python3 -c "import sys; g=int(sys.argv[1],16); print(':'.join('%04x' % (g >> s & 0xffff) for s in (48,32,16,0)))" \
        "$3" >"$dev/node_guid"
      local pre=()
      [ $r = 1 ] && pre=(env LD_PRELOAD="$UMAD2SIM" SIM_HOST="$1")
      (cd "$SIM_DIR" && "${pre[@]}" env -u SLURM_JOB_ID RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        FABSCOPE_CLUSTER_TOKEN=t FABSCOPE_ROOT="$out/root$r" FABSCOPE_CLUSTER_PAIR_ADDR=127.0.0.1 \
        "$fabscope" cluster --timeout 30 --pairs all --engine tcp --pair-seconds 0.2 --fabric-from "$4" --json \
        >"$out/live$r.out" 2>"$out/live$r.err") &
      pids+=($!)
    done
    for p in "${pids[@]}"; do rc=0; wait "$p" || rc=$?; codes+=($rc); done
    for rc in "${codes[@]}"; do [ "$rc" -le 2 ] || { cat "$out"/live*.err; fail "a rank exited $rc"; }; done
  }
  sed -i 's/$/ 1/' "$out/hosts"   # the sweeper is argument 4
  run_ranks
  python3 - "$out/live0.out" <<'PY' || { cat "$out"/live*.err; fail "--fabric-from 1"; }
import json, sys
d = json.load(open(sys.argv[1]))
l = d["localization"]
assert l["attempted"], l
assert l["observations"] == 6 and l["unrouted"] == 0, l
assert l["notes"] == [], l["notes"]
assert [p["port"] for n in d["nodes"] for p in n["ib_ports"]] == ["rxe0:1"] * 3, d["nodes"]
print("fabric from rank 1:", l["fabric_source"], "-", l["observations"], "directions routed")
PY
  sed -i 's/ 1$/ 2/' "$out/hosts"
  run_ranks
  python3 - "$out/live0.out" <<'PY' || { cat "$out"/live*.err; fail "--fabric-from 2 without access"; }
import json, sys
l = json.load(open(sys.argv[1]))["localization"]
assert not l["attempted"] and l["why_not"].startswith("--fabric-from 2: "), l
print("without access:", l["why_not"])
PY
  grep -q -- "--fabric-from 2: " "$out/live0.err" || fail "rank 0 did not say it on stderr"
  ;;
input)
  synth cable
  echo 'not json' >"$out/bad.json"
  rc=0; "$fabscope" cluster --from "$out/bad.json" --fabric "$out/fabric.json" 2>"$out/err" || rc=$?
  [ "$rc" = 3 ] && grep -q "bad.json: not JSON" "$out/err" || { cat "$out/err"; fail "non-JSON result: exit $rc"; }
  python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); d['pairwise']['pairs'][3]['a_to_b_gbps']='fast'
json.dump(d, open(sys.argv[2],'w'))" "$out/run-cable.json" "$out/typo.json"
  rc=0; "$fabscope" cluster --from "$out/typo.json" --fabric "$out/fabric.json" 2>"$out/err" || rc=$?
  [ "$rc" = 3 ] && grep -q "pairwise.pairs\[3\].a_to_b_gbps" "$out/err" || { cat "$out/err"; fail "bad field: exit $rc"; }
  # --from alone locates by the nodes' LLDP switches; these InfiniBand nodes reported none.
  rc=0; "$fabscope" cluster --from "$out/run-cable.json" >"$out/alone.txt" 2>"$out/err" || rc=$?
  [ "$rc" = 0 ] && grep -q "not located: no node reported an LLDP neighbour" "$out/alone.txt" ||
    { cat "$out/alone.txt" "$out/err"; fail "--from alone: exit $rc"; }
  # A sweep without forwarding tables: measured, not located, and told how to save them.
  sim_run H-l00-00 "$fabscope" fabric --save "$out/plain.json" >/dev/null 2>&1 || true
  rc=0; "$fabscope" cluster --from "$out/run-cable.json" --fabric "$out/plain.json" >"$out/plain.txt" || rc=$?
  cat "$out/plain.txt"
  [ "$rc" = 0 ] && grep -q "not located: the fabric .* has no forwarding tables" "$out/plain.txt" || fail "no-routes: exit $rc"
  ;;
*) fail "unknown scenario $scenario" ;;
esac
echo "PASS $scenario"
