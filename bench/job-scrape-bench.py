#!/usr/bin/env python3
"""Scrape latency of `fabscope exporter --jobs` serving a job's ranks, beside node_exporter.

Usage: job-scrape-bench.py FABSCOPE DRIVER PLUGIN [--ranks 4] [--comms 16] [--sizes 12] [--scrapes 400]
                           [--node-exporter PATH]

The driver (tests/plugin/profiler_driver.cpp, built as build/tests/plugin/fabscope-profiler-driver)
forks RANKS processes that load the plugin and drive COMMS communicators each through SIZES message
sizes as NCCL 2.28 does, then stay alive. The exporter (node checks off) serves their segments;
node_exporter (Debian's prometheus-node-exporter, default collectors) runs beside it as the anchor:
a scrape every Prometheus setup already pays for. One keep-alive connection per exporter, warm-up
scrapes, then SCRAPES timed GET /metrics each, alternating. Prints a Markdown table: median, p90,
p99, max (ms), body bytes, series; and the exporter's VmRSS/VmHWM after the run.
"""
import argparse
import http.client
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(port, deadline):
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/metrics")
            c.getresponse().read()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"exporter on port {port} did not come up")


def status_kib(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fabscope")
    ap.add_argument("driver")
    ap.add_argument("plugin")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--comms", type=int, default=16)
    ap.add_argument("--sizes", type=int, default=12)
    ap.add_argument("--scrapes", type=int, default=400)
    ap.add_argument("--node-exporter", default=shutil.which("prometheus-node-exporter") or "")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="fabscope-job-bench-")
    procs = []
    try:
        drv = subprocess.Popen([a.driver, a.plugin, work, "--ranks", str(a.ranks), "--comms", str(a.comms),
                                "--ops", str(a.sizes * 10), "--sizes", str(a.sizes), "--in-flight"],
                               stdout=subprocess.PIPE, text=True)
        procs.append(drv)
        assert drv.stdout.readline().startswith("ready")
        targets = {}
        port = free_port()
        ex = subprocess.Popen([a.fabscope, "exporter", "--listen", f"127.0.0.1:{port}", "--checks-interval", "0",
                               "--jobs", "--jobs-dir", work], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(ex)
        targets["fabscope exporter --jobs"] = (port, ex.pid)
        if a.node_exporter:
            nport = free_port()
            ne = subprocess.Popen([a.node_exporter, f"--web.listen-address=127.0.0.1:{nport}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            procs.append(ne)
            targets["node_exporter (default collectors)"] = (nport, ne.pid)
        deadline = time.monotonic() + 30
        conns = {}
        for name, (p, _) in targets.items():
            wait_up(p, deadline)
            conns[name] = http.client.HTTPConnection("127.0.0.1", p, timeout=10)
        times = {n: [] for n in targets}
        sizes = {}
        for i in range(a.scrapes + 20):
            for name, c in conns.items():
                t0 = time.perf_counter()
                c.request("GET", "/metrics")
                body = c.getresponse().read()
                dt = time.perf_counter() - t0
                if i >= 20:
                    times[name].append(dt * 1000)
                sizes[name] = body
        print(f"{a.ranks} ranks x {a.comms} communicators x {a.sizes} sizes; {a.scrapes} scrapes each, alternating\n")
        print("| exporter | median ms | p90 ms | p99 ms | max ms | body bytes | samples | VmRSS / VmHWM KiB |")
        print("|---|---|---|---|---|---|---|---|")
        for name, ts in times.items():
            ts.sort()
            q = lambda f: ts[min(len(ts) - 1, int(f * len(ts)))]  # noqa: E731
            body = sizes[name].decode(errors="replace")
            samples = sum(1 for l in body.splitlines() if l and not l.startswith("#"))
            pid = targets[name][1]
            print(f"| {name} | {statistics.median(ts):.2f} | {q(0.9):.2f} | {q(0.99):.2f} | {ts[-1]:.2f} | "
                  f"{len(sizes[name])} | {samples} | {status_kib(pid, 'VmRSS')} / {status_kib(pid, 'VmHWM')} |")
    finally:
        for p in procs:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
