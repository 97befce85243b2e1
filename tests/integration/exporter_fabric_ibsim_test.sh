#!/usr/bin/env bash
# `fabscope exporter --fabric` on a simulated fabric (ibsim + OpenSM, tests/integration/ibsim/
# harness.sh, tests/fixtures/ibsim/leafspine.net: 4 switches, 6 HCAs, 10 cables), scraped every
# second by a real Prometheus that loads the fabric alert rules. Through Prometheus' HTTP API:
#   - every cable has a link series, up, labelled with both ends; the master SM is there;
#   - a SymbolErrorCounter set with ibsim's PerformanceSet on S-spine2 port 2 arrives in
#     fabscope_fabric_port_symbol_errors_total with that node's GUID, name and port, and the
#     FabscopeFabricSymbolErrorsRising rule fires in Prometheus;
#   - an Unlinked cable (S-spine2 port 2 <-> S-leaf2 port 8) turns its fabscope_fabric_link_up to 0
#     and FabscopeFabricLinkDown goes pending.
#   - every query of the fabric's Grafana dashboard evaluates, with data where the fabric has some.
# Every wait polls under a deadline.
# Usage: exporter_fabric_ibsim_test.sh FABSCOPE PROMETHEUS RULES DASHBOARD
set -euo pipefail
fabscope=$(realpath "$1") prometheus=$2 rules=$(realpath "$3") dashboard=$(realpath "$4")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ibsim/harness.sh"
sim_skip_unless_available
sim_start "$here/../fixtures/ibsim/leafspine.net"
sm_start H-node1

fail() {
  echo "FAIL: $*"
  for log in exporter.log prometheus.log; do
    [ -f "$SIM_DIR/$log" ] && { echo "--- $log (tail)"; tail -20 "$SIM_DIR/$log"; }
  done
  exit 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
stop_all() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  sim_stop
}
trap stop_all EXIT

# The exporter is a client of the simulator (umad2sim preloaded); Prometheus is not.
# Port 0: the kernel picks a free one, which the exporter names once it serves ("(port N)").
LD_PRELOAD=$UMAD2SIM SIM_HOST=H-node1 "$fabscope" exporter --listen 127.0.0.1:0 --checks-interval 0 \
  --fabric --fabric-interval 1 --fabric-discovery-interval 2 >"$SIM_DIR/exporter.log" 2>&1 &
pids+=($!)
serving() { grep -q "(port [0-9]*)" "$SIM_DIR/exporter.log"; }
end=$((SECONDS + 60))
until serving; do
  [ $SECONDS -lt $end ] || fail "the exporter is not serving after 60 s"
  kill -0 "${pids[0]}" 2>/dev/null || fail "the exporter exited"
  sleep 0.2
done
exp_port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$SIM_DIR/exporter.log" | sed -n 1p)
# Prometheus' port is chosen once the exporter holds its own, so the two never coincide.
prom_port=$(free_port)
while [ "$prom_port" = "$exp_port" ]; do prom_port=$(free_port); done
cat >"$SIM_DIR/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [$rules]
scrape_configs:
  - job_name: fabric
    static_configs:
      - targets: ['127.0.0.1:$exp_port']
YML
"$prometheus" --config.file="$SIM_DIR/prometheus.yml" --storage.tsdb.path="$SIM_DIR/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$SIM_DIR/prometheus.log" 2>&1 &
pids+=($!)

# q EXPR: the result vector as "labels=value" lines, labels sorted (empty when none).
q() {
  python3 - "$prom_port" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
port, expr = sys.argv[1], sys.argv[2]
url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
try:
    reply = json.load(urllib.request.urlopen(url, timeout=5))
except Exception:
    sys.exit(0)  # not up yet: nothing
assert reply["status"] == "success", reply
for r in reply["data"]["result"]:
    m = r["metric"]
    print(",".join(f"{k}={m[k]}" for k in sorted(m) if k != "__name__") + "=" + r["value"][1])
PY
}
# alerts NAME: "state labels" of alert NAME in Prometheus (pending or firing)
alerts() {
  python3 - "$prom_port" "$1" <<'PY'
import json, sys, urllib.request
port, name = sys.argv[1], sys.argv[2]
try:
    reply = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/alerts", timeout=5))
except Exception:
    sys.exit(0)
for a in reply["data"]["alerts"]:
    if a["labels"].get("alertname") == name:
        print(a["state"], ",".join(f"{k}={v}" for k, v in sorted(a["labels"].items())))
PY
}
# wait_for SECONDS DESCRIPTION COMMAND...: until COMMAND succeeds
wait_for() {
  local secs=$1 what=$2; shift 2
  local end=$((SECONDS + secs))
  until "$@"; do
    [ $SECONDS -lt $end ] || fail "timed out after ${secs}s waiting for $what"
    sleep 0.5
  done
}
lines_are() { [ "$(q "$1" | wc -l)" = "$2" ]; }
value_is() { [ "$(q "$1" | sed 's/.*=//')" = "$2" ]; }
alert_in() { alerts "$1" | grep -- "$2" >/dev/null; }  # reads all: grep -q could SIGPIPE curl (pipefail)

wait_for 60 "Prometheus to scrape the exporter" value_is 'up{job="fabric"}' 1
wait_for 30 "10 cables, all up" lines_are 'fabscope_fabric_link_up == 1' 10
echo "ok   10 links up"
# The exposition itself passes promtool's lint (names, units, help, types) where promtool is installed.
if command -v promtool >/dev/null; then
  python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
    "http://127.0.0.1:$exp_port/metrics" >"$SIM_DIR/metrics.txt"
  promtool check metrics <"$SIM_DIR/metrics.txt" >"$SIM_DIR/promtool.txt" 2>&1 || { cat "$SIM_DIR/promtool.txt"; fail "promtool check metrics"; }
  echo "ok   promtool check metrics clean on $(grep -c '^fabscope_fabric_' "$SIM_DIR/metrics.txt") fabric samples"
fi
value_is 'fabscope_fabric_sms{state="MASTER"}' 1 || fail "one master SM: $(q 'fabscope_fabric_sms')"
value_is 'fabscope_fabric_nodes{type="switch"}' 4 || fail "4 switches: $(q 'fabscope_fabric_nodes')"
leaf_link=$(q 'fabscope_fabric_link_width_lanes{remote_node_name="S-leaf1",remote_port="3"}')
grep -q 'node_name=H-node3,port=1,' <<<"$leaf_link" && grep -q '=1$' <<<"$leaf_link" ||
  fail "the H-node3 cable at 1X with both ends named: $leaf_link"
echo "ok   master SM, 4 switches, H-node3's cable at 1 lane"
# The fabric's findings join fabscope_check_status: the 1X and EDR links warn (1), SMs are fine.
value_is 'fabscope_check_status{check="fabric.link_degraded"}' 1 ||
  fail "fabric.link_degraded warns: $(q 'fabscope_check_status{check="fabric.link_degraded"}')"
value_is 'fabscope_check_status{check="fabric.sm_none"}' 0 || fail "fabric.sm_none ok: $(q 'fabscope_check_status{check=~"fabric.sm.*"}')"
echo "ok   fabric.link_degraded 1 and fabric.sm_none 0 in fabscope_check_status"

sym='fabscope_fabric_port_symbol_errors_total{node_name="S-spine2",port="2"}'
wait_for 20 "the spine port's symbol errors at 0 in Prometheus" value_is "$sym" 0
sim_cmd 'PerformanceSet "S-spine2"[2] PortCounters.SymbolErrorCounter=1234'
wait_for 30 "1234 symbol errors on S-spine2:2 in Prometheus" value_is "$sym" 1234
got=$(q "$sym")
guid=$(sed -n 's/.*node_guid=\(0x[0-9a-f]\{16\}\),.*/\1/p' <<<"$got")
[ -n "$guid" ] || fail "S-spine2:2 has a node_guid label: $got"
# ibnetdiscover names each switch by its GUID: Switch 8 "S-0000000000200003"  # "S-spine2" ...
want_guid=0x$(sim_run H-node1 ibnetdiscover 2>/dev/null | sed -n 's/^Switch.*"S-\([0-9a-f]\{16\}\)".*# "S-spine2".*/\1/p')
[ "$want_guid" = "$guid" ] || fail "node_guid $guid is S-spine2's node GUID (ibnetdiscover says '$want_guid')"
grep -q "instance=127.0.0.1:$exp_port,job=fabric,node_guid=$guid,node_name=S-spine2,port=2=1234" <<<"$got" ||
  fail "labels of the symbol error series: $got"
echo "ok   PerformanceSet SymbolErrorCounter=1234 on S-spine2:2 arrived as $got"
wait_for 30 "FabscopeFabricSymbolErrorsRising to fire for S-spine2:2" \
  alert_in FabscopeFabricSymbolErrorsRising "^firing .*node_name=S-spine2,port=2"
echo "ok   FabscopeFabricSymbolErrorsRising firing in Prometheus"

link='fabscope_fabric_link_up{node_name="S-leaf2",port="8",remote_node_name="S-spine2",remote_port="2"} or fabscope_fabric_link_up{node_name="S-spine2",port="2",remote_node_name="S-leaf2",remote_port="8"}'
value_is "$link" 1 || fail "the S-leaf2:8 <-> S-spine2:2 cable up before the Unlink: $(q "$link")"
sim_cmd 'Unlink "S-spine2"[2]'
wait_for 30 "the unlinked cable's link_up at 0" value_is "$link" 0
state=$(q "${link//link_up/link_state}")
[ "$(sed 's/.*=//' <<<"$state")" = 1 ] || fail "the unlinked cable's link_state Down (1): $state"
lines_are 'fabscope_fabric_link_up == 1' 9 || fail "the 9 other cables still up: $(q 'fabscope_fabric_link_up == 1' | wc -l)"
echo "ok   Unlink: the cable's link_up 0, link_state 1 (Down), 9 others up"
wait_for 30 "FabscopeFabricLinkDown pending for the cable" \
  alert_in FabscopeFabricLinkDown "^pending .*remote_node_name=S-.*"
echo "ok   FabscopeFabricLinkDown pending in Prometheus"
python3 - "$prom_port" "$dashboard" <<'PY' || fail "the dashboard's queries"
import json, sys, urllib.parse, urllib.request
port, path = sys.argv[1], sys.argv[2]
exprs = [t["expr"] for p in json.load(open(path))["panels"] for t in p.get("targets", [])]
empty = []
for e in exprs:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": e.replace("$instance", ".*")})
    reply = json.load(urllib.request.urlopen(url, timeout=5))  # a bad query is an HTTP error: raises
    assert reply["status"] == "success", (e, reply)
    # Only the link-error panel may be empty: nothing but symbol errors was set.
    if not reply["data"]["result"] and "link_error_recoveries" not in e:
        empty.append(e)
assert not empty, f"queries without data: {empty}"
print(f"ok   all {len(exprs)} dashboard queries evaluate")
PY
value_is 'sum(fabscope_fabric_collection_errors_total)' 0 || fail "no collection errors: $(q 'fabscope_fabric_collection_errors_total')"
echo "PASS"
