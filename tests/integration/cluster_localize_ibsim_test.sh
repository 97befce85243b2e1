#!/usr/bin/env bash
# `fabscope cluster --from RESULT --fabric FABRIC` names the cable or switch the slow pairs share,
# on routes a real OpenSM programmed into a simulated fat tree (ibsim, 4 leaves x 4 spines, 16
# HCAs; tests/integration/ibsim/harness.sh). The pair matrix is synthesized with rdma-core's own
# route tracer as the ground truth: for 8 hosts (2 per leaf), every ordered pair is traced with
# `ibtracert`, and a direction is slowed (x0.4) when its traced route crosses the fault. fabscope
# only sees the saved sweep (`fabric --routes --save`) and the matrix.
#   cable    both directions of one leaf-spine cable: cluster.slow_fabric_link names that cable
#   fibre    one direction of it only: named as that direction
#   switch   every route through one spine: cluster.slow_switch names the spine
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
fail() { echo "FAIL: $*"; exit 1; }

sim_run H-l00-00 "$fabscope" fabric --routes --save "$out/fabric.json" >/dev/null 2>"$out/fabric.err" ||
  { cat "$out/fabric.err"; fail "fabric --routes --save"; }

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
synth() {
  python3 - "$out/hosts" "$out/traces" "$1" >"$out/run-$1.json" <<'PY'
import json, random, re, statistics, sys
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
# The fault: S-leaf01's uplink to S-spine02 (leaf port 4 hosts + spine 2 + 1 = 7, spine port 2).
up = ("S-leaf01", 7, "S-spine02", 2)
down = ("S-spine02", 2, "S-leaf01", 7)
def slow(hops):
    if fault == "cable":
        return up in hops or down in hops
    if fault == "fibre":
        return up in hops
    if fault == "switch":
        return any(h[2] == "S-spine01" for h in hops)
    return False
rng = random.Random(7)
pairs, values = [], []
for a in range(8):
    for b in range(a + 1, 8):
        ab = 100 * rng.gauss(1, 0.02) * (0.4 if slow(routes[(a, b)]) else 1)
        ba = 100 * rng.gauss(1, 0.02) * (0.4 if slow(routes[(b, a)]) else 1)
        pairs.append({"a": a, "b": b, "a_to_b_gbps": ab, "b_to_a_gbps": ba, "engine": "rdma",
                      "engine_reason": "", "wall_seconds": 4.1, "error": ""})
        values.append(min(ab, ba))
# The outlier threshold as docs/cluster.md states it (median, MAD, k = 4, drop 15-50 %).
med = statistics.median(values)
mad = statistics.median(abs(v - med) for v in values)
threshold = med - min(max(4 * 1.4826 * mad, 0.15 * med), 0.5 * med)
nodes = [{"rank": i, "name": h[0].split()[0], "fabscope_version": "t", "pair_address": "", "rdma_address": "",
          "rdma_note": "", "error": "", "findings": [],
          "ib_ports": [{"port": "mlx5_0:1", "lid": int(h[1]), "node_guid": h[2], "state": "ACTIVE"}]}
         for i, h in enumerate(hosts)]
print(json.dumps({"schema": "fabscope.cluster", "schema_version": 1, "launcher": "env", "world": 8,
                  "nodes": nodes, "pairwise": {"mode": "all", "engine": "rdma", "pairs": pairs,
                                               "threshold_gbps": threshold}}))
PY
}
# locate FAULT: runs fabscope on it; the last line: exit, first suspect kind, name, finding ids (tabs).
locate() {
  local rc=0
  "$fabscope" cluster --from "$out/run-$1.json" --fabric "$out/fabric.json" --json >"$out/loc-$1.json" || rc=$?
  "$fabscope" cluster --from "$out/run-$1.json" --fabric "$out/fabric.json" >"$out/loc-$1.txt" || true
  cat "$out/loc-$1.txt"
  python3 - "$out/loc-$1.json" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["localization"]["suspects"]
print("\t".join([sys.argv[2], s[0]["kind"] if s else "-", s[0]["name"] if s else "-",
                 ",".join(sorted(f["id"] + "=" + f["subject"] for f in d["findings"]))]))
PY
}

case $scenario in
cable)
  synth cable
  IFS=$'\t' read -r rc kind name ids < <(locate cable | tail -1)
  [ "$kind" = cable ] && [ "$name" = "S-leaf01:7 <-> S-spine02:2" ] || fail "first suspect $kind '$name'"
  [ "$ids" = "cluster.slow_fabric_link=S-leaf01:7 <-> S-spine02:2" ] || fail "findings $ids"
  [ "$rc" = 1 ] || fail "exit $rc, expected 1 (a warning)"
  ;;
fibre)
  synth fibre
  IFS=$'\t' read -r rc kind name ids < <(locate fibre | tail -1)
  [ "$kind" = cable ] && [ "$name" = "S-leaf01:7 -> S-spine02:2" ] || fail "first suspect $kind '$name'"
  grep -q 'S-leaf01:7 -> S-spine02:2 (this direction)' "$out/loc-fibre.json" || fail "not named as one direction"
  ;;
switch)
  synth switch
  IFS=$'\t' read -r rc kind name ids < <(locate switch | tail -1)
  [ "$kind" = switch ] && [ "$name" = S-spine01 ] || fail "first suspect $kind '$name'"
  [ "$ids" = "cluster.slow_switch=S-spine01" ] || fail "findings $ids"
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
  rc=0; "$fabscope" cluster --from "$out/run-cable.json" 2>"$out/err" || rc=$?
  [ "$rc" = 3 ] && grep -q -- "--from needs --fabric" "$out/err" || { cat "$out/err"; fail "--from alone: exit $rc"; }
  # A sweep without forwarding tables: measured, not located, and told how to save them.
  sim_run H-l00-00 "$fabscope" fabric --save "$out/plain.json" >/dev/null 2>&1
  rc=0; "$fabscope" cluster --from "$out/run-cable.json" --fabric "$out/plain.json" >"$out/plain.txt" || rc=$?
  cat "$out/plain.txt"
  [ "$rc" = 0 ] && grep -q "not located: .*fabscope fabric --routes --save" "$out/plain.txt" || fail "no-routes: exit $rc"
  ;;
*) fail "unknown scenario $scenario" ;;
esac
echo "PASS $scenario"
