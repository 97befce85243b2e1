#!/usr/bin/env bash
# `fabscope fabric --plan` / `--save-plan` on a simulated fabric (ibsim + OpenSM,
# tests/integration/ibsim/harness.sh; tests/fixtures/ibsim/leafspine.net):
#   - the plan written by --save-plan, and the simulator's own topology file (ibnetdiscover's
#     format) as a plan, both match the sweep: no fabric.plan_* finding, live and --from a save;
#   - a plan that puts H-node1 on S-leaf1 port 4: fabric.plan_miswired, "the right node, the wrong port";
#   - H-node4's only cable unlinked in the simulator: the host is fabric.plan_node_missing; an uplink
#     unlinked: fabric.plan_cable_missing naming both ends;
#   - a plan with a bad line: exit 3 naming file:line.
# Usage: fabric_plan_ibsim_test.sh FABSCOPE
set -euo pipefail
fabscope=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
topology=$(realpath "$here/../fixtures/ibsim/leafspine.net")
. "$here/ibsim/harness.sh"
sim_skip_unless_available
sim_start "$topology"
sm_start H-node1
out=$SIM_DIR/out
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }
# fabric NAME ARGS...: `fabscope fabric --json ARGS` attached at H-node1 into $out/NAME.json
fabric() {
  local name=$1 rc=0; shift
  sim_run H-node1 "$fabscope" fabric --json "$@" >"$out/$name.json" 2>"$out/$name.err" || rc=$?
  [ $rc -lt 3 ] || { cat "$out/$name.err" >&2; fail "fabric $name exited $rc"; }
}
# plan_findings NAME: "id|subject|message" of the fabric.plan_* findings of $out/NAME.json
plan_findings() {
  python3 -c '
import json, sys
for f in json.load(open(sys.argv[1]))["findings"]:
    if f["id"].startswith("fabric.plan_"):
        print(f["id"] + "|" + f["subject"] + "|" + f["message"])' "$out/$1.json"
}

fabric save --save "$out/saved.json" --save-plan "$out/plan.csv"
grep -q '^S-leaf1:1,H-node1:1$' "$out/plan.csv" || { cat "$out/plan.csv"; fail "the saved plan has S-leaf1:1,H-node1:1"; }
[ "$(grep -vc '^#' "$out/plan.csv")" = 10 ] || { cat "$out/plan.csv"; fail "the saved plan has the 10 cables"; }
fabric own --plan "$out/plan.csv"
[ -z "$(plan_findings own)" ] || { plan_findings own; fail "the saved plan matches the sweep"; }
"$fabscope" fabric --from "$out/saved.json" --plan "$out/plan.csv" --json >"$out/from.json" || true
[ -z "$(plan_findings from)" ] || { plan_findings from; fail "the saved plan matches the saved sweep"; }
fabric topo --plan "$topology"
[ -z "$(plan_findings topo)" ] || { plan_findings topo; fail "the simulator's topology file, as a plan, matches"; }
echo "ok   the saved plan and the ibnetdiscover-format topology match the sweep"

sed 's/^S-leaf1:1,H-node1:1$/S-leaf1:4,H-node1:1/' "$out/plan.csv" >"$out/moved.csv"
fabric moved --plan "$out/moved.csv"
got=$(plan_findings moved)
echo "$got" | grep -q '^fabric.plan_miswired|S-leaf1:4 <-> H-node1:1|.*H-node1:1 goes to S-leaf1:1 (the right node, the wrong port)' ||
  { echo "$got"; fail "the moved plan: H-node1 miswired"; }
[ "$(echo "$got" | grep -c .)" = 1 ] || { echo "$got"; fail "one finding for the moved plan"; }
echo "ok   a plan with H-node1 on another port: fabric.plan_miswired"

sim_cmd 'Unlink "S-leaf2"[1]'
fabric unlinked --plan "$out/plan.csv"
got=$(plan_findings unlinked)
echo "$got" | grep -q '^fabric.plan_node_missing|H-node4|' || { echo "$got"; fail "H-node4, cut off, is a planned node missing"; }
echo "ok   H-node4's only cable unlinked: the host is fabric.plan_node_missing"
sim_cmd 'Unlink "S-spine2"[2]'
fabric uplink --plan "$out/plan.csv"
got=$(plan_findings uplink)
echo "$got" | grep -Eq '^fabric.plan_cable_missing\|(S-leaf2:8 <-> S-spine2:2|S-spine2:2 <-> S-leaf2:8)\|' ||
  { echo "$got"; fail "the unlinked uplink is a planned cable missing"; }
echo "ok   an uplink unlinked: fabric.plan_cable_missing naming both ends"

printf 'S-leaf1:1,H-node1:1\nS-leaf1:x,H-node2:1\n' >"$out/bad.csv"
rc=0
"$fabscope" fabric --from "$out/saved.json" --plan "$out/bad.csv" >"$out/bad.out" 2>&1 || rc=$?
[ $rc = 3 ] && grep -q "bad.csv:2: port 'x' is not a number" "$out/bad.out" || { cat "$out/bad.out"; fail "a bad plan line exits 3 naming it ($rc)"; }
echo "ok   a bad plan line: exit 3 with file:line"
echo PASS
