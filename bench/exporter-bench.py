#!/usr/bin/env python3
"""Scrape latency and memory of `fabscope exporter` vs Debian's prometheus-node-exporter.

Usage: exporter-bench.py FABSCOPE [FABSCOPE...] [--node-exporter PATH] [--scrapes N] [--archive TTAR]

FABSCOPE is the all-in-one `fabscope` binary (run as `fabscope exporter`) or the standalone
`fabscope-exporter`; several are measured side by side with node_exporter in the same run.

Both exporters read the same unpacked sysfs capture (tests/fixtures/procfs-infiniband); node_exporter
runs only its infiniband collector. One Python http.client connection per exporter on loopback
(keep-alive, as Prometheus scrapes), warm-up scrapes first, then N timed GET /metrics each,
alternating between the two exporters so that machine noise hits both alike. Reports median, p90
and p99 latency (request sent to body read), series count, and VmRSS / VmHWM from /proc after the
run, with Pss (shared library pages divided among the processes mapping them) and the anonymous
part of RSS. Prints a Markdown table for bench/RESULTS.md.
"""
import argparse
import http.client
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))
import ttar  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(port, deadline_s=20):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/metrics")
            if c.getresponse().status == 200:
                c.close()
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"exporter on port {port} did not come up")


def proc_kib(pid, field, path="status"):
    with open(f"/proc/{pid}/{path}") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fabscope", nargs="+")
    ap.add_argument("--node-exporter", default="/usr/bin/prometheus-node-exporter")
    ap.add_argument("--scrapes", type=int, default=2000)
    ap.add_argument("--archive", default=os.path.join(HERE, "..", "tests", "fixtures", "procfs-infiniband",
                                                      "sys-class-infiniband-and-net.ttar"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="fabscope-bench-")
    procs = {}
    try:
        root = os.path.join(work, "root")
        ttar.unpack(args.archive, root)
        ports = {}
        for binary in args.fabscope:
            name = os.path.basename(binary)
            cmd = [binary] if name.startswith("fabscope-exporter") else [binary, "exporter"]
            name = " ".join([name] + cmd[1:])
            ports[name] = free_port()
            procs[name] = subprocess.Popen(
                cmd + ["--listen", f"127.0.0.1:{ports[name]}", "--root", root],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ports["node_exporter"] = free_port()
        procs["node_exporter"] = subprocess.Popen(
            [args.node_exporter, "--collector.disable-defaults", "--collector.infiniband",
             f"--path.sysfs={root}/sys", f"--web.listen-address=127.0.0.1:{ports['node_exporter']}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for p in ports.values():
            wait_up(p)
        conns = {k: http.client.HTTPConnection("127.0.0.1", p, timeout=10) for k, p in ports.items()}
        times = {k: [] for k in ports}
        series = {}
        for i in range(args.scrapes + 100):
            for name, c in conns.items():
                t0 = time.perf_counter()
                c.request("GET", "/metrics")
                r = c.getresponse()
                body = r.read()
                dt = time.perf_counter() - t0
                if r.status != 200:
                    raise SystemExit(f"{name}: HTTP {r.status}")
                if i >= 100:
                    times[name].append(dt)
                series[name] = sum(1 for l in body.decode().splitlines() if l and not l.startswith("#"))
        print(f"{args.scrapes} scrapes each after 100 warm-up, alternating, one keep-alive connection each\n")
        print("| exporter | series | median ms | p90 ms | p99 ms | VmRSS MiB | VmHWM MiB | Pss MiB | anon MiB |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        med = {}
        rss = {}
        for name in ports:
            t = sorted(times[name])
            med[name] = statistics.median(t) * 1e3
            rss[name] = proc_kib(procs[name].pid, "VmRSS") / 1024
            print(f"| {name} | {series[name]} | {med[name]:.3f} | {t[int(len(t) * 0.9)] * 1e3:.3f} | "
                  f"{t[int(len(t) * 0.99)] * 1e3:.3f} | {rss[name]:.1f} | "
                  f"{proc_kib(procs[name].pid, 'VmHWM') / 1024:.1f} | "
                  f"{proc_kib(procs[name].pid, 'Pss', 'smaps_rollup') / 1024:.1f} | "
                  f"{proc_kib(procs[name].pid, 'RssAnon') / 1024:.1f} |")
        print()
        for name in ports:
            if name != "node_exporter":
                print(f"node_exporter / {name}: median latency x{med['node_exporter'] / med[name]:.1f}, "
                      f"RSS x{rss['node_exporter'] / rss[name]:.1f}")
    finally:
        for p in procs.values():
            p.kill()
            p.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
