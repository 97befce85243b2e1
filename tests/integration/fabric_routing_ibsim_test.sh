#!/usr/bin/env bash
# The routing checks of `fabscope fabric --routes` on forwarding tables a real OpenSM programmed
# on a simulated fabric (ibsim, tests/integration/ibsim/harness.sh):
#   ring     tests/fixtures/ibsim/ring5.net (five switches in a ring, an HCA on each) routed by
#            OpenSM's default engine (min-hop): each route takes the short way round, and the
#            dependencies close a cycle in each direction: two fabric.credit_loop findings of five
#            links each, every link of one direction named; the same from the saved sweep
#            (--from, no fabric); every LID reachable
#   updn     the same ring routed by `opensm -R updn` rooted at S-ring0: no credit loop, every LID
#            reachable
#   tree     tests/fixtures/ibsim/leafspine.net (2 spines, 2 leaves) under min-hop: no credit loop,
#            no unreachable LID, the busiest switch-to-switch ports listed in `routing`
# Usage: fabric_routing_ibsim_test.sh SCENARIO FABSCOPE
set -euo pipefail
scenario=$1 fabscope=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ibsim/harness.sh"
sim_skip_unless_available
topology=ring5.net host=H-ring0 sm_args=()
[ "$scenario" = tree ] && topology=leafspine.net host=H-node1
sim_start "$here/../fixtures/ibsim/$topology"
if [ "$scenario" = updn ]; then
  # up/down needs its root: S-ring0's node GUID, read by directed route before any SM runs
  sim_run "$host" ibnetdiscover -p >"$SIM_DIR/discover.txt"
  awk "/^SW/ && /\( 'S-ring0' -/ {print \$4; exit}" "$SIM_DIR/discover.txt" >"$SIM_DIR/roots"
  grep -q '^0x' "$SIM_DIR/roots" || { cat "$SIM_DIR/discover.txt"; echo "FAIL: no GUID for S-ring0"; exit 1; }
  sm_args=(-R updn -a "$SIM_DIR/roots")
fi
sm_start "$host" "${sm_args[@]}"
out=$SIM_DIR/out
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }

rc=0
sim_run "$host" "$fabscope" fabric --routes --json --save "$out/saved.json" >"$out/live.json" 2>"$out/live.err" || rc=$?
[ $rc -lt 3 ] || { cat "$out/live.err" >&2; fail "fabric --routes exited $rc"; }
rc_from=0
"$fabscope" fabric --from "$out/saved.json" --json >"$out/from.json" 2>"$out/from.err" || rc_from=$?
[ $rc_from -lt 3 ] || { cat "$out/from.err" >&2; fail "fabric --from exited $rc_from"; }
human=0
"$fabscope" fabric --from "$out/saved.json" >"$out/human.txt" 2>&1 || human=$?

python3 - "$scenario" "$out" "$rc" "$rc_from" <<'PY'
import json, sys
scenario, out, rc, rc_from = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
failures = []
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
for name, code in (("live", rc), ("from", rc_from)):
    d = json.load(open(f"{out}/{name}.json"))
    r = d.get("routing")
    check(r is not None and r["judged"], f"{name}: the routes were judged ({r and r.get('judged')})")
    if r is None:
        continue
    loops = [f for f in d["findings"] if f["id"] == "fabric.credit_loop"]
    unreach = [f for f in d["findings"] if f["id"] == "fabric.lid_unreachable"]
    check(not unreach and not r["unreachable"], f"{name}: every LID reachable from every switch ({[f['message'] for f in unreach]})")
    if scenario == "ring":
        check(r["credit_loops"] == 2 and len(loops) == 2, f"{name}: two credit loops ({r['credit_loops']}, {len(loops)} findings)")
        for f in loops:
            links = f["message"].split(": ", 1)[1].split(", back")[0].split(", ")
            ports = {l.split(" -> ")[0].rsplit(":", 1)[1] for l in links}
            nodes = sorted(l.split(" -> ")[0].rsplit(":", 1)[0] for l in links)
            check(len(links) == 5 and len(ports) == 1 and nodes == [f"S-ring{i}" for i in range(5)] and f["severity"] == "fail",
                  f"{name}: a loop of five links, one per switch, all one way round: {f['message']}")
        check(code == 2, f"{name}: exit 2 for the credit loops ({code})")
    else:
        check(r["credit_loops"] == 0 and not loops, f"{name}: no credit loop ({r['credit_loops']}: {[f['message'] for f in loops]})")
    if scenario == "tree":
        check(len(r["busiest_ports"]) > 0 and r["busiest_ports"][0]["routes"] > 0 and
              all(p["node"].startswith("S-") for p in r["busiest_ports"]),
              f"{name}: the busiest switch-to-switch ports are listed: {r['busiest_ports'][:3]}")
        check(r["sources"] == 6, f"{name}: six HCA ports send (H-node6's second port has no cable): {r['sources']}")
text = open(f"{out}/human.txt").read()
check("Routing: " in text and all(len(l) <= 100 for l in text.splitlines()), "human view: a Routing section, 100 columns")
if failures:
    print(open(f"{out}/human.txt").read())
    sys.exit(1)
PY
echo "PASS: $scenario"
