#!/usr/bin/env python3
"""Integration test: three `fabscope exporter --mesh` on loopback probing each other, scraped by a
real Prometheus with the mesh's rules loaded.

Usage: mesh_prometheus.py FABSCOPE PROMETHEUS MESH_RULES_YML MESH_DASHBOARD_JSON

1. every node answers the other two (fabscope_mesh_peer_up == 1 for the six pairs, RTT histograms
   and the recording rules evaluate);
2. strangers at node 0's responder: garbage, a wrong token, a silent crowd over the pending
   limit of one address, a flood of valid probes that never reads its replies; each is refused
   and counted by reason, and node 0 keeps answering its peers;
3. node 2 is killed: the others count its probes as errors and FabscopeMeshPeerUnreachable fires
   in Prometheus for the two of them; node 2 comes back on the same ports and the alert clears.
Every query of the mesh dashboard evaluates. The rules' `for:` are shortened to 5 s in the copy
Prometheus loads (the expressions are the file's own; promtool tests the durations). Every wait
has a deadline; the processes are killed at the end.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from prom import free_port, get, query, wait_for  # noqa: E402

DEADLINE_S = 150
TOKEN = "mesh-integration-0123456789"


def value(result):
    return float(result[0]["value"][1]) if result else None


def main():
    fabscope, prometheus, rules, dashboard = sys.argv[1:5]
    deadline = time.monotonic() + DEADLINE_S
    work = tempfile.mkdtemp(prefix="fabscope-mesh-it-")
    procs = {}
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        if not cond:
            failures.append(what)

    http = [free_port() for _ in range(3)]
    mesh = [free_port() for _ in range(3)]
    ids = [f"127.0.0.1:{p}" for p in mesh]
    peers = os.path.join(work, "peers.txt")
    with open(peers, "w") as f:
        f.write("# the three nodes of this test\n" + "".join(i + "\n" for i in ids) + "this is not a host\n")
    env = dict(os.environ, FABSCOPE_MESH_TOKEN=TOKEN, FABSCOPE_ROOT="")

    def start(n):
        log = open(os.path.join(work, f"exporter{n}.log"), "a")
        procs[n] = subprocess.Popen(
            [fabscope, "exporter", "--listen", f"127.0.0.1:{http[n]}", "--checks-interval", "0", "--mesh",
             "--mesh-listen", f"127.0.0.1:{mesh[n]}", "--mesh-peers", peers, "--mesh-rate", "20",
             # A loaded 2-core test machine stalls processes for longer than a network would.
             "--mesh-timeout-ms", "2000"],
            stdout=log, stderr=subprocess.STDOUT, env=env)
        wait_for(f"exporter {n} /healthz", lambda: get(f"http://127.0.0.1:{http[n]}/healthz")[0] == 200, deadline)

    try:
        for n in range(3):
            start(n)
        with open(rules) as f:
            text = re.sub(r"for: \d+m", "for: 5s", f.read())
        with open(os.path.join(work, "fabscope-mesh-rules.yml"), "w") as f:
            f.write(text)
        prom_port = free_port()
        with open(os.path.join(work, "prometheus.yml"), "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [fabscope-mesh-rules.yml]
scrape_configs:
  - job_name: fabscope
    static_configs:
      - targets: [{", ".join(f"'127.0.0.1:{p}'" for p in http)}]
""")
        prom_log = open(os.path.join(work, "prometheus.log"), "w")
        procs["prometheus"] = subprocess.Popen(
            [prometheus, f"--config.file={work}/prometheus.yml", f"--storage.tsdb.path={work}/tsdb",
             f"--web.listen-address=127.0.0.1:{prom_port}"], stdout=prom_log, stderr=subprocess.STDOUT, cwd=work)
        wait_for("three successful scrapes", lambda: len(query(prom_port, 'up{job="fabscope"} == 1')) == 3, deadline)

        # 1. Every node answers the other two.
        wait_for("six pairs answering", lambda: len(query(prom_port, "fabscope_mesh_peer_up == 1")) == 6, deadline)
        listed = query(prom_port, 'fabscope_mesh_peers{state="listed"}')
        check(len(listed) == 3 and all(float(r["value"][1]) == 2 for r in listed),
              f"each node lists the other two, not itself: {[r['value'][1] for r in listed]}")
        bad = query(prom_port, "fabscope_mesh_peer_list_bad_lines")
        check(len(bad) == 3 and all(float(r["value"][1]) == 1 for r in bad), "the bad line is counted on every node")
        rtt = wait_for("RTT histograms", lambda: query(prom_port, "fabscope_mesh_rtt_seconds_count > 0"), deadline)
        check(len(rtt) == 6, f"an RTT histogram per pair: {len(rtt)}")
        p50 = wait_for("the median RTT recording rule",
                       lambda: query(prom_port, "fabscope:mesh_rtt_seconds:p50_5m > 0"), deadline)
        check(all(float(r["value"][1]) < 1.0 for r in p50), f"median RTT on loopback under 1 s: {len(p50)} pairs")
        delay = query(prom_port, "fabscope_mesh_responder_delay_seconds_count > 0")
        check(len(delay) == 3, f"every responder times its own delay: {len(delay)}")

        # 2. Strangers at node 0's responder.
        inst0 = f"127.0.0.1:{http[0]}"

        def rejected(reason):
            return value(query(prom_port, f'fabscope_mesh_responder_rejected_total{{instance="{inst0}",reason="{reason}"}}'))

        answered_before = value(query(prom_port, f'sum(fabscope_mesh_responder_probes_total{{instance="{inst0}",result="answered"}})'))
        g = socket.create_connection(("127.0.0.1", mesh[0]), timeout=5)
        g.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        w = socket.create_connection(("127.0.0.1", mesh[0]), timeout=5)
        w.sendall(b"FSMESH1 not-the-mesh-token-at-all\n")
        refusal = w.recv(8)
        check(refusal == b"FSMSHNO\n", f"a wrong token is told so: {refusal!r}")
        f = socket.create_connection(("127.0.0.1", mesh[0]), timeout=5)
        f.sendall(f"FSMESH1 {TOKEN}\n".encode())
        probe = b"FSMP" + bytes(12)
        f.setblocking(False)
        sent = 0
        cut = False
        flood_end = time.monotonic() + 20
        while time.monotonic() < flood_end and not cut:
            try:
                sent += f.send(probe * 256)
            except BlockingIOError:
                time.sleep(0.01)
            except OSError:
                cut = True
        check(cut, f"the flood was cut after {sent} bytes")
        wait_for("garbage, wrong token and flood counted",
                 lambda: (rejected("garbage") or 0) >= 1 and (rejected("unauthenticated") or 0) >= 1
                 and (rejected("flood") or 0) >= 1, deadline)
        # A silent crowd from one address, over the limit of connections saying hello from one
        # address (8): each newcomer cuts the oldest waiting one, the last 8 time out.
        crowd = [socket.create_connection(("127.0.0.1", mesh[0]), timeout=5) for _ in range(60)]
        wait_for("the crowd cut over the limit and timed out",
                 lambda: (rejected("too_many_connections") or 0) >= 50 and (rejected("hello_timeout") or 0) >= 8,
                 deadline)
        for s in [g, w, f] + crowd:
            s.close()
        limited = value(query(prom_port, f'fabscope_mesh_responder_probes_total{{instance="{inst0}",result="rate_limited"}}'))
        check(limited and limited > 1000, f"the flood's probes were rate-limited, not answered: {limited}")
        check(procs[0].poll() is None, "node 0 still runs")
        wait_for("node 0 answering its peers after the strangers",
                 lambda: value(query(prom_port, f'sum(fabscope_mesh_responder_probes_total{{instance="{inst0}",result="answered"}})'))
                 > answered_before + 20, deadline)

        # 3. Node 2 stops: its peers count errors and the unreachable alert fires for both.
        procs[2].kill()
        procs[2].wait(timeout=10)
        firing = f'ALERTS{{alertname="FabscopeMeshPeerUnreachable",alertstate="firing",peer="{ids[2]}"}}'
        fired = wait_for("FabscopeMeshPeerUnreachable for node 2", lambda: len(query(prom_port, firing)) == 2 and
                         query(prom_port, firing), deadline)
        check({r["metric"]["instance"] for r in fired} == {f"127.0.0.1:{http[0]}", f"127.0.0.1:{http[1]}"},
              "fired on nodes 0 and 1")
        errs = query(prom_port, f'sum by (instance) (fabscope_mesh_probe_errors_total{{peer="{ids[2]}",'
                                'reason=~"connect|closed|timeout"}) > 0')
        check(len(errs) == 2, f"both count node 2's probes as errors: {errs}")
        others = query(prom_port, f'ALERTS{{alertname="FabscopeMeshPeerUnreachable",peer!="{ids[2]}"}}')
        check(not others, f"no other pair is unreachable: {others}")

        start(2)  # the fault removed
        wait_for("the alert clears", lambda: not query(prom_port, firing), deadline)
        check(True, "FabscopeMeshPeerUnreachable cleared once node 2 answered again")

        _, rules_body = get(f"http://127.0.0.1:{prom_port}/api/v1/rules")
        groups = json.loads(rules_body)["data"]["groups"]
        bad = [r["name"] for g in groups for r in g["rules"] if r.get("health") not in ("ok", "unknown")]
        check(not bad, f"every rule evaluates without error: {bad}")
        exprs = [t["expr"] for p in json.load(open(dashboard))["panels"] for t in p.get("targets", [])]
        for e in exprs:
            query(prom_port, e.replace("$instance", ".*").replace("$peer", ".*").replace("$__range", "5m")
                  .replace("$__rate_interval", "1m"))  # asserts success
        check(bool(exprs), f"all {len(exprs)} dashboard queries evaluate")
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
        if failures:
            for log in sorted(os.listdir(work)):
                if log.endswith(".log"):
                    print(f"--- {log} (tail)")
                    print("".join(open(os.path.join(work, log)).readlines()[-15:]))
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        sys.exit(f"{len(failures)} assertion(s) failed")
    print("mesh integration: all assertions passed")


if __name__ == "__main__":
    main()
