#!/usr/bin/env bash
# `fabscope exporter --fabric` at scale, side by side with the way the open-source fabric
# exporters collect (treydock/infiniband_exporter's method reproduced with the diag tools: one
# `ibnetdiscover`, then per switch one `perfquery -l -x -G GUID PORTS` over the switch's connected
# ports, PORTS comma-separated, one switch after the other: that exporter's default of one
# perfquery at a time), on the same simulated fat tree (bench/fattree-topology.py: 64 leaves,
# 32 spines, 2,048 HCAs) in one run (bench/RESULTS.md, "fabscope exporter --fabric at scale").
# Until issue 45 the anchor ran `perfquery -x -l LID` with no port list, which reads only port 0
# (the switch's management port) and none of its cables: a fraction of the work.
#
# Per round, alternating: the diag-tool method (wall time of the whole collection, processes
# started sequentially as that exporter does; the ports perfquery printed counters for are
# counted, so a method that reads fewer ports shows it), then the exporter's own collections as
# it reports them (fabscope_fabric_collection_duration_seconds of a discovery and of a counters
# collection).
# Meanwhile a client scrapes /metrics back to back: the scrape latency while collections run
# (median, p90, p99), and the exporter's VmRSS at the end.
#
# usage: bench/fabric-exporter-bench.sh FABSCOPE_EXPORTER [ROUNDS] [LEAVES SPINES HCAS_PER_LEAF]
set -euo pipefail
exporter=$(realpath "$1")
rounds=${2:-3}
. "$(cd "$(dirname "$0")" && pwd)/fabric-tree.sh"

LD_PRELOAD=$UMAD2SIM SIM_HOST=H-l00-00 "$exporter" --listen 127.0.0.1:0 --checks-interval 0 --fabric \
  --fabric-interval 5 --fabric-discovery-interval 20 >"$SIM_DIR/exporter.log" 2>&1 &
exp_pid=$!
trap 'kill $exp_pid 2>/dev/null || true; wait $exp_pid 2>/dev/null || true; sim_stop' EXIT
end=$((SECONDS + 300))
until grep -q "(port [0-9]*)" "$SIM_DIR/exporter.log"; do
  [ $SECONDS -lt $end ] || { cat "$SIM_DIR/exporter.log"; echo "exporter not serving"; exit 1; }
  sleep 0.5
done
port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$SIM_DIR/exporter.log" | head -1)

# The diag-tool method: every switch's GUID and connected ports from ibnetdiscover, then one
# perfquery per switch over those ports. Prints: seconds, switches, failed perfqueries, ports read.
diag_round() {
  python3 - "$UMAD2SIM" <<'PY'
import os, re, subprocess, sys, time
env = dict(os.environ, LD_PRELOAD=sys.argv[1], SIM_HOST="H-l00-00")
t = time.monotonic()
topo = subprocess.run(["ibnetdiscover"], env=env, capture_output=True, text=True, check=True).stdout
# A switch record: 'switchguid=0x...(...)', 'Switch  64 "S-..." ...', then one '[port] "peer"[...]'
# line per connected port, up to the blank line.
switches, guid, ports = [], None, None
for line in topo.splitlines() + [""]:
    m = re.match(r'switchguid=(0x[0-9a-fA-F]+)', line)
    if m:
        guid = m.group(1)
    elif line.startswith("Switch"):
        ports = []
    elif ports is not None and re.match(r'\[(\d+)\]', line):
        ports.append(re.match(r'\[(\d+)\]', line).group(1))
    elif ports is not None and not line.strip():
        if ports:
            switches.append((guid, ports))
        ports = None
bad = read = 0
for guid, ports in switches:
    r = subprocess.run(["perfquery", "-l", "-x", "-G", guid, ",".join(ports)], env=env, capture_output=True,
                       text=True)
    bad += r.returncode != 0
    read += len(re.findall(r'^PortSelect:\.*\d+', r.stdout, re.M))
print(f"{time.monotonic() - t:.3f} {len(switches)} {bad} {read}")
PY
}

metric() {  # metric NAME KIND: the value of NAME{kind="KIND"}
  python3 - "$port" "$1" "$2" <<'PY'
import sys, urllib.request
port, name, kind = sys.argv[1:]
for line in urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30).read().decode().splitlines():
    if line.startswith(f'{name}{{kind="{kind}"}} '):
        print(line.split()[-1])
PY
}

# Scrapes back to back for the whole run, one keep-alive connection, latencies to a file per
# kind, alternating: plain text, and gzip as Prometheus asks for it (Accept-Encoding: gzip; the
# time to receive the whole compressed response, not to decompress it).
python3 - "$port" "$SIM_DIR/scrapes.txt" "$SIM_DIR/scrapes-gzip.txt" <<'PY' &
import http.client, sys, time
port, out, out_gz = sys.argv[1], sys.argv[2], sys.argv[3]
c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=30)
with open(out, "w") as f, open(out_gz, "w") as g:
    n = 0
    while True:
        gz = n % 2 == 1
        n += 1
        t = time.monotonic()
        try:
            c.request("GET", "/metrics", headers={"Accept-Encoding": "gzip"} if gz else {})
            r = c.getresponse(); body = r.read()
        except Exception:
            break
        (g if gz else f).write(f"{(time.monotonic() - t) * 1000:.3f} {len(body)}\n")
        (g if gz else f).flush()
PY
scraper=$!

for ((r = 1; r <= rounds; r++)); do
  read -r t n bad ports < <(diag_round)
  printf 'diag tools (ibnetdiscover + perfquery -l -x -G GUID PORTS per switch) round %d: %7.3f s  %d switches  %d ports  %d failed\n' \
    "$r" "$t" "$n" "$ports" "$bad"
  d=$(metric fabscope_fabric_collection_duration_seconds discovery)
  c=$(metric fabscope_fabric_collection_duration_seconds counters)
  printf 'fabscope exporter --fabric             round %d: discovery %s s, counters %s s\n' "$r" "$d" "$c"
  sleep 6  # at least one more counters collection before the next reading
done
kill $scraper 2>/dev/null || true
python3 - "$SIM_DIR/scrapes.txt" "$SIM_DIR/scrapes-gzip.txt" "$exp_pid" <<'PY'
import statistics, sys
for label, path in (("plain", sys.argv[1]), ("gzip", sys.argv[2])):
    rows = [l.split() for l in open(path) if l.strip()]
    v = sorted(float(r[0]) for r in rows)
    size = statistics.median(int(r[1]) for r in rows)
    q = lambda p: v[min(len(v) - 1, int(p * len(v)))]
    print(f"scrapes while collecting, {label}: {len(v)}, median {statistics.median(v):.2f} ms, p90 {q(0.9):.2f} ms, "
          f"p99 {q(0.99):.2f} ms, max {v[-1]:.2f} ms, body {size / 1e6:.2f} MB")
rss = [l for l in open(f"/proc/{sys.argv[3]}/status") if l.startswith(("VmRSS", "VmHWM"))]
print("exporter " + ", ".join(l.split()[0] + " " + str(round(int(l.split()[1]) / 1024, 1)) + " MiB" for l in rss))
PY
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
