#!/usr/bin/env python3
"""Load test of `fabscope exporter`: 1,000 concurrent wrk connections plus slow clients, bounded.

Usage: exporter-load.py FABSCOPE [--seconds S] [--connections N] [--slow N]

Starts the exporter on the unpacked procfs capture, then at once:
  - wrk with N keep-alive connections hammering /metrics for S seconds;
  - SLOW slowloris clients that send a request head one byte every second and never finish it;
  - one "Prometheus" client that scrapes /metrics on a fresh connection every 250 ms.
Samples the exporter's VmRSS every 100 ms. Reports wrk's numbers, the scraper's successes and
worst latency, the RSS peak, and the exporter's own HTTP counters. Bounded: S + 15 seconds.
"""
import argparse
import http.client
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))
import ttar  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fabscope")
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--connections", type=int, default=1000)
    ap.add_argument("--slow", type=int, default=200)
    args = ap.parse_args()
    archive = os.path.join(HERE, "..", "tests", "fixtures", "procfs-infiniband", "sys-class-infiniband-and-net.ttar")
    work = tempfile.mkdtemp(prefix="fabscope-load-")
    stop = threading.Event()
    exporter = None
    try:
        root = os.path.join(work, "root")
        ttar.unpack(archive, root)
        port = free_port()
        exporter = subprocess.Popen([args.fabscope, "exporter", "--listen", f"127.0.0.1:{port}", "--root", root],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        idle_rss = rss_kib(exporter.pid)

        rss = []
        def sample():
            while not stop.is_set():
                rss.append(rss_kib(exporter.pid))
                time.sleep(0.1)

        slow_socks = []
        def slowloris():
            head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 10000
            for _ in range(args.slow):
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=2)
                    slow_socks.append(s)
                except OSError:
                    pass
            i = 0
            while not stop.is_set() and i < len(head):
                for s in list(slow_socks):
                    try:
                        s.send(head[i:i + 1])
                    except OSError:
                        slow_socks.remove(s)  # closed by the exporter: reconnect, as an attacker would
                        try:
                            slow_socks.append(socket.create_connection(("127.0.0.1", port), timeout=2))
                        except OSError:
                            pass
                i += 1
                time.sleep(1)

        scrapes = {"ok": 0, "failed": 0, "worst_s": 0.0}
        def scraper():
            while not stop.is_set():
                t0 = time.perf_counter()
                try:
                    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                    c.request("GET", "/metrics")
                    r = c.getresponse()
                    body = r.read()
                    c.close()
                    if r.status == 200 and b"fabscope_port_state" in body:
                        scrapes["ok"] += 1
                    else:
                        scrapes["failed"] += 1
                except OSError:
                    scrapes["failed"] += 1
                scrapes["worst_s"] = max(scrapes["worst_s"], time.perf_counter() - t0)
                time.sleep(0.25)

        threads = [threading.Thread(target=f, daemon=True) for f in (sample, slowloris, scraper)]
        for t in threads:
            t.start()
        wrk = subprocess.run(["wrk", "-t2", f"-c{args.connections}", f"-d{args.seconds}s", "--timeout", "5s",
                              f"http://127.0.0.1:{port}/metrics"], capture_output=True, text=True,
                             timeout=args.seconds + 15)
        stop.set()
        for t in threads:
            t.join(timeout=5)
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("GET", "/metrics")
        own = c.getresponse().read().decode()
        c.close()
        print(wrk.stdout.strip())
        print(f"\nexporter RSS: idle {idle_rss / 1024:.1f} MiB, peak under load {max(rss) / 1024:.1f} MiB "
              f"({len(rss)} samples), after {rss_kib(exporter.pid) / 1024:.1f} MiB")
        print(f"scraper on fresh connections every 250 ms: {scrapes['ok']} ok, {scrapes['failed']} failed, "
              f"worst {scrapes['worst_s'] * 1e3:.1f} ms")
        print(f"slow clients held open at the end: {len(slow_socks)}")
        for m in ("fabscope_http_requests_total", "fabscope_http_rejected_total",
                  "fabscope_http_connections_evicted_total", "fabscope_http_connections_open"):
            v = re.search(rf"^{m} (\S+)$", own, re.M)
            print(f"{m} {v.group(1) if v else '?'}")
        for s in slow_socks:
            s.close()
    finally:
        stop.set()
        if exporter:
            exporter.kill()
            exporter.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
