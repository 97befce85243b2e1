#!/usr/bin/env bash
# `fabscope exporter --fabric` when the fabric misbehaves (ibsim + OpenSM,
# tests/integration/ibsim/harness.sh, tests/fixtures/ibsim/leafspine.net), scraped directly:
#   killed       the simulator is killed while the exporter collects every second: the last good
#                collection stays served (same link series), its last-success time stops moving,
#                fabscope_fabric_collection_errors_total counts the failures, every scrape is
#                answered, the exporter keeps running
#   unreachable  S-leaf2 loses both uplinks after the discovery: its nodes' counters time out
#                on their own (fabscope_fabric_ports_without_counters, notes, the per-node
#                unanswered series name them) while every other port is still read
#   sms          a second OpenSM joins with a higher priority: the SM series go from one master
#                to one master and one standby, two fabscope_fabric_sm_state series
#   flood        1,000 concurrent scrapes: the server holds at most its connection limit, every
#                accepted scrape gets the whole fabric, the rest are refused; the exporter stays
#                up and serves the next scrape, its resident memory bounded
# Every wait polls under a deadline.
# Usage: exporter_fabric_faults_test.sh SCENARIO FABSCOPE
set -euo pipefail
scenario=$1 fabscope=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ibsim/harness.sh"
sim_skip_unless_available
sim_start "$here/../fixtures/ibsim/leafspine.net"
sm_start H-node1

fail() {
  echo "FAIL: $*"
  [ -f "$SIM_DIR/exporter.log" ] && { echo "--- exporter.log (tail)"; tail -20 "$SIM_DIR/exporter.log"; }
  exit 1
}
exporter_pid=
stop_all() {
  [ -n "$exporter_pid" ] && { kill "$exporter_pid" 2>/dev/null || true; wait "$exporter_pid" 2>/dev/null || true; }
  sim_stop
}
trap stop_all EXIT

discovery=600  # the counters re-reads are what the faults hit; SMInfo is read by a discovery
[ "$scenario" = sms ] && discovery=1
LD_PRELOAD=$UMAD2SIM SIM_HOST=H-node1 "$fabscope" exporter --listen 127.0.0.1:0 --checks-interval 0 \
  --fabric --fabric-interval 1 --fabric-discovery-interval $discovery --fabric-timeout-ms 50 --fabric-retries 1 \
  >"$SIM_DIR/exporter.log" 2>&1 &
exporter_pid=$!
end=$((SECONDS + 60))
until grep -q "(port [0-9]*)" "$SIM_DIR/exporter.log"; do
  [ $SECONDS -lt $end ] || fail "the exporter is not serving after 60 s"
  kill -0 "$exporter_pid" 2>/dev/null || fail "the exporter exited"
  sleep 0.2
done
port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$SIM_DIR/exporter.log" | sed -n 1p)

# scrape: /metrics into $SIM_DIR/metrics (fails the test when not answered within 10 s).
scrape() {
  python3 - "$port" "$SIM_DIR/metrics" <<'PY' || fail "a scrape was not answered"
import sys, urllib.request
body = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=10).read()
open(sys.argv[2], "wb").write(body)
PY
}
# value NAME{LABELS}: the sample's value from the last scrape ("" when absent).
value() { awk -v k="$1" '$1 == k { print $2 }' "$SIM_DIR/metrics"; }
# wait_for DESCRIPTION SECONDS CONDITION...: scrape until CONDITION succeeds.
wait_for() {
  local what=$1 end=$((SECONDS + $2)); shift 2
  until scrape && "$@"; do
    [ $SECONDS -lt $end ] || fail "$what: not within the deadline"
    sleep 0.5
  done
}
collected() { [ "$(value 'fabscope_fabric_last_success_timestamp_seconds{kind="counters"}')" != "0" ] &&
              [ -n "$(value 'fabscope_fabric_last_success_timestamp_seconds{kind="counters"}')" ]; }
wait_for "a first counters collection" 60 collected
links() { grep -c '^fabscope_fabric_link_up{' "$SIM_DIR/metrics" || true; }

case $scenario in
killed)
  n_links=$(links)
  [ "$n_links" = 10 ] || fail "$n_links link series before the fault, expected 10"
  errors0=$(value 'fabscope_fabric_collection_errors_total{kind="counters"}')
  sim_kill
  failing() {
    local e
    e=$(value 'fabscope_fabric_collection_errors_total{kind="counters"}')
    [ -n "$e" ] && [ "$e" -ge $((errors0 + 2)) ]
  }
  wait_for "two failed collections counted" 60 failing
  last=$(value 'fabscope_fabric_last_success_timestamp_seconds{kind="counters"}')
  sleep 2
  scrape
  [ "$(value 'fabscope_fabric_last_success_timestamp_seconds{kind="counters"}')" = "$last" ] ||
    fail "the last-success time moved while the fabric is gone"
  [ "$(links)" = "$n_links" ] || fail "the last good collection is not served: $(links) link series"
  kill -0 "$exporter_pid" || fail "the exporter died"
  grep -q . "$SIM_DIR/exporter.log" && grep -Eiq "fabric|collection" "$SIM_DIR/exporter.log" ||
    fail "the failure was not logged"
  echo "OK served the last good collection (errors $errors0 -> $(value 'fabscope_fabric_collection_errors_total{kind="counters"}'))"
  ;;
unreachable)
  # H-node6's second port has no cable: it is never read, before the fault too.
  base=$(value fabscope_fabric_ports_without_counters)
  grep -q '^fabscope_fabric_node_unanswered{.*node_name="S-leaf2"' "$SIM_DIR/metrics" && fail "S-leaf2 unanswered before the fault"
  sim_cmd 'Unlink "S-leaf2"[7]'
  sim_cmd 'Unlink "S-leaf2"[8]'
  cut_off() { local v; v=$(value fabscope_fabric_ports_without_counters); [ -n "$v" ] && [ "$v" -gt "$base" ]; }
  wait_for "the cut-off leaf's ports without counters" 60 cut_off
  grep -E '^fabscope_fabric_node_unanswered\{.*node_name="S-leaf2"' "$SIM_DIR/metrics" ||
    fail "S-leaf2 is not named as unanswered"
  sent=$(value 'fabscope_fabric_mads_sent_total{kind="counters"}')
  timeouts=$(value 'fabscope_fabric_mad_timeouts_total{kind="counters"}')
  [ -n "$sent" ] && [ "$sent" -gt 0 ] && [ -n "$timeouts" ] && [ "$timeouts" -gt 0 ] ||
    fail "MADs sent '$sent', timeouts '$timeouts' after the cut"
  # The rest of the fabric is still read: S-leaf1's counters keep coming.
  last=$(value 'fabscope_fabric_last_success_timestamp_seconds{kind="counters"}')
  moved() { [ "$(value 'fabscope_fabric_last_success_timestamp_seconds{kind="counters"}')" != "$last" ]; }
  wait_for "another complete counters collection" 30 moved
  grep -Eq '^fabscope_fabric_port_symbol_errors_total\{.*node_name="S-leaf1".*\} 0$' "$SIM_DIR/metrics" ||
    fail "S-leaf1's counters are not served"
  echo "OK the cut-off leaf is named, the rest is read"
  ;;
sms)
  [ "$(value 'fabscope_fabric_sms{state="MASTER"}')" = 1 ] || fail "not one master before"
  [ "$(value 'fabscope_fabric_sms{state="STANDBY"}')" = 0 ] || fail "a standby before the second SM"
  sm_start H-node4 -p 10
  two() {
    [ "$(value 'fabscope_fabric_sms{state="MASTER"}')" = 1 ] && [ "$(value 'fabscope_fabric_sms{state="STANDBY"}')" = 1 ] &&
      [ "$(grep -c '^fabscope_fabric_sm_state{' "$SIM_DIR/metrics")" = 2 ]
  }
  wait_for "one master and one standby" 90 two
  grep '^fabscope_fabric_sm_' "$SIM_DIR/metrics"
  echo "OK the second SM is in the SM series"
  ;;
flood)
  python3 - "$port" "$exporter_pid" <<'PY' || fail "flood"
import socket, sys, threading
port, pid = int(sys.argv[1]), sys.argv[2]
ok, refused, short = [0], [0], [0]
lock = threading.Lock()
def one():
    s = socket.socket()
    s.settimeout(60)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            data += chunk
        with lock:
            if data.startswith(b"HTTP/1.1 200") and b"fabscope_fabric_link_up{" in data:
                ok[0] += 1
            elif not data or data.startswith(b"HTTP/1.1 503"):
                refused[0] += 1
            else:
                short[0] += 1
    except OSError:
        with lock:
            refused[0] += 1
    finally:
        s.close()
threads = [threading.Thread(target=one) for _ in range(1000)]
for t in threads:
    t.start()
for t in threads:
    t.join()
rss_kib = int(next(l.split()[1] for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:")))
print(f"1000 concurrent scrapes: {ok[0]} served whole, {refused[0]} refused or closed, {short[0]} other; "
      f"exporter VmRSS {rss_kib / 1024:.1f} MiB")
assert short[0] == 0, "a scrape got a partial or wrong answer"
assert ok[0] >= 1, "no scrape was served"
assert ok[0] + refused[0] == 1000
assert rss_kib < 256 * 1024, "resident memory above 256 MiB"
PY
  scrape
  [ "$(links)" = 10 ] || fail "the next scrape is not whole"
  kill -0 "$exporter_pid" || fail "the exporter died"
  echo "OK"
  ;;
*) fail "unknown scenario $scenario" ;;
esac
echo "PASS $scenario"
