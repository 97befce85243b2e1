#!/usr/bin/env python3
"""What `fabscope exporter --mesh` costs a node, and what node mode costs without it.

Usage: mesh-cost.py EXPORTER [--base BASE_EXPORTER] [--seconds S] [--rate R]

1. Node mode: EXPORTER (and BASE_EXPORTER, a build without the mesh, when given) alone, no
   --mesh: VmRSS, threads and sockets after 50 scrapes.
2. Mesh mode: three EXPORTERs on loopback probing each other at R probes/s each (default 10,
   the default rate) for S seconds (default 60) after 5 s of warm-up: the CPU time each process
   used (utime + stime from /proc/PID/stat) per second of wall time (share of one core) and per
   probe (sent + answered: each process both probes and answers), and VmRSS at the end.
Numbers go to stdout as Markdown rows for bench/RESULTS.md.
"""
import argparse
import os
import socket
import subprocess
import tempfile
import time
import urllib.request

TOKEN = "mesh-cost-0123456789abcdef"
TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.read().decode()


def wait_up(port):
    end = time.monotonic() + 30
    while time.monotonic() < end:
        try:
            metrics(port)
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"exporter on {port} did not come up")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def status(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return line.split()[1]
    return None


def sockets(pid):
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            n += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return n


def total(text, name, match=""):
    s = 0.0
    for line in text.splitlines():
        if line.startswith(name) and match in line:
            s += float(line.rsplit(" ", 1)[1])
    return s


def node_mode(binary, label):
    port = free_port()
    p = subprocess.Popen([binary, "--listen", f"127.0.0.1:{port}", "--checks-interval", "0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_up(port)
        for _ in range(50):
            metrics(port)
        print(f"| {label} | node mode | {int(status(p.pid, 'VmRSS')) / 1024:.1f} | {status(p.pid, 'Threads')} | "
              f"{sockets(p.pid)} |")
    finally:
        p.kill()
        p.wait()


def mesh_mode(binary, seconds, rate):
    http = [free_port() for _ in range(3)]
    mesh = [free_port() for _ in range(3)]
    work = tempfile.mkdtemp(prefix="fabscope-mesh-cost-")
    peers = os.path.join(work, "peers")
    with open(peers, "w") as f:
        f.write("".join(f"127.0.0.1:{m}\n" for m in mesh))
    env = dict(os.environ, FABSCOPE_MESH_TOKEN=TOKEN)
    procs = [subprocess.Popen([binary, "--listen", f"127.0.0.1:{h}", "--checks-interval", "0", "--mesh",
                               "--mesh-listen", f"127.0.0.1:{m}", "--mesh-peers", peers, "--mesh-rate", str(rate)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
             for h, m in zip(http, mesh)]
    try:
        for h in http:
            wait_up(h)
        time.sleep(5)
        t0 = time.monotonic()
        c0 = [cpu_seconds(p.pid) for p in procs]
        m0 = [metrics(h) for h in http]
        time.sleep(seconds)
        t1 = time.monotonic()
        c1 = [cpu_seconds(p.pid) for p in procs]
        m1 = [metrics(h) for h in http]
        for i, p in enumerate(procs):
            sent = total(m1[i], "fabscope_mesh_probes_sent_total") - total(m0[i], "fabscope_mesh_probes_sent_total")
            answered = (total(m1[i], "fabscope_mesh_responder_probes_total", 'result="answered"')
                        - total(m0[i], "fabscope_mesh_responder_probes_total", 'result="answered"'))
            cpu = c1[i] - c0[i]
            wall = t1 - t0
            # The scrapes above (two) cost CPU too; at a 60 s window they are noise.
            print(f"| node {i} | --mesh-rate {rate} | {sent / wall:.1f} | {answered / wall:.1f} | "
                  f"{100 * cpu / wall:.3f} % | {1e6 * cpu / max(1, sent + answered):.1f} | "
                  f"{int(status(p.pid, 'VmRSS')) / 1024:.1f} | {status(p.pid, 'Threads')} | {sockets(p.pid)} |")
    finally:
        for p in procs:
            p.kill()
            p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exporter")
    ap.add_argument("--base")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--rate", type=float, default=10)
    a = ap.parse_args()
    print("| binary | mode | VmRSS MiB | threads | sockets |\n|---|---|---:|---:|---:|")
    for _ in range(4):  # alternating
        if a.base:
            node_mode(a.base, "before --mesh")
        node_mode(a.exporter, "this build, no --mesh")
    print()
    print("| node | rate | probes sent/s | probes answered/s | CPU (one core) | CPU µs per probe | VmRSS MiB | "
          "threads | sockets |\n|---|---|---:|---:|---:|---:|---:|---:|---:|")
    mesh_mode(a.exporter, a.seconds, a.rate)


if __name__ == "__main__":
    main()
