#!/usr/bin/env python3
"""Strangers on the network against the real fabscope binary, on loopback.

cluster (the env contract, rank 0 listening on MASTER_PORT):
  flood      25 connections claiming a 4 MiB hello and sending 3 MiB each, 25 more holding half a
             hello: rank 0's peak memory stays small and the real rank 1 still joins;
  emfile     rank 0 at its descriptor limit (RLIMIT_NOFILE lowered) with 40 idle connections
             from eight addresses:
             it pauses instead of spinning, and rank 1 joins once they are gone;
  blackhole  MASTER_PORT whose listen queue is full (SYNs dropped, as an unreachable host):
             rank 1 gives up at --timeout instead of blocking in connect();
  overwrite  a stranger's refused hello does not replace the reason recorded for a missing rank;
  refusal_lines  200 wrong-token hellos cost rank 0 a few stderr lines and one count, not 200;
  slurm      SLURM_JOB_ID as the only secret is warned about.
rdma (fabscope rdma --server):
  planted    a stranger's {"error"} is quoted as rdma.peer_failed without a token and dropped
             with one; never the stranger's id or docs link;
  slowloris  a stranger trickling one byte a second neither holds the server nor delays a real
             client.
Every wait is bounded; no step relies on a sleep finishing in time.
Usage: hostile_peers_test.py FABSCOPE_BINARY
"""
import json
import os
import resource
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

FAB = sys.argv[1]
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "rxe-vm")
BOUND = 60  # seconds: the upper bound of any one wait (generous, for a loaded 2-core runner)
procs = []
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "FABSCOPE_", "OMPI_", "PMI"))}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def cluster(rank, world, port, token="secret", timeout=30, nofile=None, **env):
    e = clean_env(RANK=rank, WORLD_SIZE=world, MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
                  FABSCOPE_ROOT=ROOT, **env)
    if token is not None:
        e["FABSCOPE_CLUSTER_TOKEN"] = token

    def limit():
        if nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    p = subprocess.Popen([FAB, "cluster", "--pairs", "none", "--json", "--timeout", str(timeout)], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limit)
    procs.append(p)
    return p


def finish(p, bound=BOUND):
    rc = None
    try:
        out, err = p.communicate(timeout=bound)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    text = lambda b: b.decode(errors="replace") if isinstance(b, bytes) else b
    return rc, text(out), text(err)


def wait_port(port, proc):
    """Until something accepts on port (the probe runs first), or the process ends, or BOUND."""
    end = time.monotonic() + BOUND
    while time.monotonic() < end and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def wait_rdma_listening(proc):
    """Until the rdma server says it listens (a probing connect would be a client to it)."""
    import select
    end = time.monotonic() + BOUND
    seen = b""
    fd = proc.stderr.fileno()
    while time.monotonic() < end and b"server listening" not in seen:
        if select.select([fd], [], [], 0.5)[0]:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            seen += chunk
    return b"server listening" in seen


def header(kind, rank, length):
    return b"FSCL" + bytes([1, kind, 0, 0]) + struct.pack(">II", rank, length)


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def closed_by_peer(s, bound):
    """True once the peer closed s (EOF or reset) within bound seconds."""
    s.settimeout(0.5)
    end = time.monotonic() + bound
    while time.monotonic() < end:
        try:
            if s.recv(65536) == b"":
                return True
        except socket.timeout:
            continue
        except OSError:
            return True
    return False


def test_flood():
    port = free_port()
    p0 = cluster(0, 2, port)
    if not wait_port(port, p0):
        return check(False, "flood: rank 0 never listened")
    big = []
    for _ in range(25):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(header(1, 1, 4 << 20))
        big.append(s)

    def push(s):
        try:
            s.settimeout(BOUND)
            s.sendall(b"x" * (3 << 20))
        except OSError:
            pass  # rank 0 closed it: the point

    pushers = [threading.Thread(target=push, args=(s,)) for s in big]
    for t in pushers:
        t.start()
    for s in big:
        check(closed_by_peer(s, BOUND), "flood: rank 0 kept an oversized hello open")
    for t in pushers:
        t.join(BOUND)
    holders = []
    for _ in range(25):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(header(1, 1, 2000) + b"{" * 1000)
        holders.append(s)
    peak_mib = status_kib(p0.pid, "VmHWM") / 1024
    print(f"flood: rank 0 peak RSS {peak_mib:.1f} MiB after 25 x 3 MiB oversized hellos", flush=True)
    check(peak_mib < 64, f"flood: rank 0 peak RSS {peak_mib:.1f} MiB (unauthenticated bytes buffered)")
    p1 = cluster(1, 2, port)
    rc1, _, err1 = finish(p1)
    rc0, out0, err0 = finish(p0)
    for s in holders + big:
        s.close()
    check(rc0 in (0, 1) and rc1 == rc0, f"flood: exit codes {rc0}/{rc1}\n{err0}\n{err1}")
    if rc0 in (0, 1):
        d = json.loads(out0)
        check(len(d["nodes"]) == 2 and d["missing"] == [], f"flood: rank 1 did not join: {d['missing']}")


def test_emfile():
    port = free_port()
    p0 = cluster(0, 2, port, nofile=24)
    if not wait_port(port, p0):
        return check(False, "emfile: rank 0 never listened")
    # From eight addresses (one address holds at most 16 of rank 0's pending connections).
    idle = [socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(f"127.0.0.{2 + i % 8}", 0))
            for i in range(40)]
    # Until rank 0 holds every descriptor it may (accept fails with EMFILE from then on).
    end = time.monotonic() + BOUND
    while time.monotonic() < end and len(os.listdir(f"/proc/{p0.pid}/fd")) < 24:
        time.sleep(0.05)
    check(len(os.listdir(f"/proc/{p0.pid}/fd")) >= 24, "emfile: rank 0 never reached its descriptor limit")
    c0 = cpu_seconds(p0.pid)
    t0 = time.monotonic()
    time.sleep(2)  # a measuring window, not a wait for something to happen
    used = cpu_seconds(p0.pid) - c0
    window = time.monotonic() - t0
    print(f"emfile: rank 0 used {used:.2f} s of CPU in {window:.2f} s at EMFILE", flush=True)
    check(used < 0.25 * window, f"emfile: rank 0 spins at EMFILE ({used:.2f} s CPU in {window:.2f} s)")
    for s in idle:
        s.close()
    p1 = cluster(1, 2, port)
    rc1, _, err1 = finish(p1)
    rc0, out0, err0 = finish(p0)
    check(rc0 in (0, 1) and rc1 == rc0, f"emfile: exit codes {rc0}/{rc1}\n{err0[-2000:]}\n{err1}")


def test_blackhole():
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(0)
    port = ls.getsockname()[1]
    fill = []
    for _ in range(8):  # until the queue is full: a connect that does not complete
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        fill.append(s)
        import select
        if not select.select([], [s], [], 0.5)[1]:
            break
    t0 = time.monotonic()
    rc, _, err = finish(cluster(1, 2, port, timeout=2))
    took = time.monotonic() - t0
    print(f"blackhole: rank 1 gave up after {took:.1f} s (--timeout 2)", flush=True)
    check(rc == 3, f"blackhole: rank 1 exit {rc} (None: still blocked after {BOUND} s)\n{err}")
    check("could not reach rank 0" in err, f"blackhole: {err}")
    for s in fill:
        s.close()
    ls.close()


def test_overwrite():
    port = free_port()
    p0 = cluster(0, 3, port, timeout=8)
    if not wait_port(port, p0):
        return check(False, "overwrite: rank 0 never listened")
    rc1, _, err1 = finish(cluster(1, 4, port))  # the real rank 1, with the wrong WORLD_SIZE
    check(rc1 == 3 and "WORLD_SIZE 4" in err1, f"overwrite: rank 1 exit {rc1}: {err1}")
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    hello = json.dumps({"token": "guess", "fabscope_version": "0", "rank": 1, "world": 3, "name": "x"}).encode()
    s.sendall(header(1, 1, len(hello)) + hello)
    check(closed_by_peer(s, BOUND), "overwrite: the stranger was not refused")
    s.close()
    rc0, out0, err0 = finish(p0)
    check(rc0 == 2, f"overwrite: rank 0 exit {rc0}\n{err0}")
    if rc0 == 2:
        missing = {m["name"]: m["reason"] for m in json.loads(out0)["missing"]}
        check("WORLD_SIZE 4" in missing.get("rank1", ""), f"overwrite: rank 1's reason replaced: {missing}")


def test_refusal_lines():
    port = free_port()
    p0 = cluster(0, 2, port)
    if not wait_port(port, p0):
        return check(False, "refusal_lines: rank 0 never listened")
    hello = json.dumps({"token": "guess", "fabscope_version": "0", "rank": 1, "world": 2, "name": "x"}).encode()
    for _ in range(200):  # a stranger guessing the token in a loop
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(header(1, 1, len(hello)) + hello)
        check(closed_by_peer(s, BOUND), "refusal_lines: a wrong token was not refused")
        s.close()
    rc1, _, err1 = finish(cluster(1, 2, port))
    rc0, out0, err0 = finish(p0)
    refused = [line for line in err0.splitlines() if "refused" in line]
    print(f"refusal_lines: rank 0 wrote {len(refused)} lines for 200 refused strangers", flush=True)
    check(rc0 in (0, 1) and rc1 == rc0, f"refusal_lines: exit codes {rc0}/{rc1}\n{err0[-2000:]}\n{err1}")
    check(len(refused) <= 20, f"refusal_lines: {len(refused)} stderr lines for 200 refused strangers")
    check("more refused or dropped connections not shown" in err0, f"refusal_lines: the rest not counted: {err0[-500:]}")


def test_slurm_token_warning():
    rc, _, err = finish(cluster(1, 2, free_port(), token=None, timeout=1, SLURM_JOB_ID="4242"))
    check(rc == 3, f"slurm: exit {rc}")
    check("the only shared secret is SLURM_JOB_ID" in err, f"slurm: no warning: {err}")


def rdma_server(port, timeout, token=None):
    env = clean_env()
    if token:
        env["FABSCOPE_RDMA_TOKEN"] = token
    p = subprocess.Popen([FAB, "rdma", "--server", "--port", str(port), "--json", "--timeout", str(timeout)],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    procs.append(p)
    return p


PLANTED = (json.dumps({"error": {"id": "rdma.x", "severity": "fail", "subject": "s", "message": "planted",
                                 "evidence": "", "remedy": "", "docs": "javascript:alert(1)"}}) + "\n").encode()


def test_rdma_planted():
    port = free_port()
    srv = rdma_server(port, 3)
    if not wait_rdma_listening(srv):
        return check(False, "planted: the server never listened")
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(PLANTED)
    rc, out, err = finish(srv)
    s.close()
    check(rc == 2, f"planted: server exit {rc}\n{err}")
    check("javascript" not in out and '"rdma.x"' not in out, f"planted: the stranger's finding was taken: {out}")
    check("rdma.peer_failed" in out and "the client said: rdma.x: planted" in out, f"planted: not quoted: {out}")

    # With a token the stranger's error and hello are dropped; the server keeps waiting.
    port = free_port()
    srv = rdma_server(port, 3, token="s3cret")
    if not wait_rdma_listening(srv):
        return check(False, "planted: the token server never listened")
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(PLANTED)
    check(closed_by_peer(s, BOUND), "planted: the error without a token was not dropped")
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b'{"hello":{"magic":"fabscope.rdma","version":1}}\n')
    s.settimeout(BOUND)
    check(s.recv(100).startswith(b'{"refused"'), "planted: a hello without the token was not refused")
    s.close()
    check(srv.poll() is None, "planted: the token server ended on a stranger's connection")
    srv.send_signal(signal.SIGTERM)
    finish(srv)


def test_rdma_slowloris():
    port = free_port()
    srv = rdma_server(port, 2)
    if not wait_rdma_listening(srv):
        return check(False, "slowloris: the server never listened")
    stop = threading.Event()
    cut = threading.Event()
    started = threading.Event()

    def trickle():
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        try:
            s.sendall(b'{"hello":')
            started.set()
            while not stop.is_set():
                s.sendall(b" ")
                s.settimeout(1)
                try:
                    if s.recv(100) == b"":
                        cut.set()
                        return
                except socket.timeout:
                    pass
        except OSError:
            cut.set()
        finally:
            s.close()

    t = threading.Thread(target=trickle)
    t.start()
    # The stranger is first in the server's queue: a server that serves in order is held by it.
    check(started.wait(BOUND), "slowloris: the stranger never connected")
    client = subprocess.run([FAB, "rdma", "127.0.0.1", "--port", str(port), "--json", "--timeout", "5"],
                            env=clean_env(), capture_output=True, text=True, timeout=BOUND)
    rc, out, err = finish(srv)
    check(cut.wait(BOUND), "slowloris: the trickling connection was never cut")
    stop.set()
    t.join(BOUND)
    check(rc is not None, "slowloris: the server was still held after the real client")
    check("rdma.timeout" not in client.stdout, f"slowloris: the real client waited out its watchdog: {client.stdout}")


for test in (test_flood, test_emfile, test_blackhole, test_overwrite, test_refusal_lines, test_slurm_token_warning,
             test_rdma_planted, test_rdma_slowloris):
    t0 = time.monotonic()
    try:
        test()
    except Exception as e:  # a peer that behaved unexpectedly: a failure of this scenario, go on
        check(False, f"{test.__name__}: {type(e).__name__}: {e}")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        procs.clear()
    print(f"{test.__name__}: {time.monotonic() - t0:.1f} s", flush=True)

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok: every hostile peer was bounded")
