#!/usr/bin/env python3
"""Strangers and hostile files against the real `fabscope exporter --mesh`, on loopback.

  lockout     a stranger holding 40 idle connections to a node's responder (from five
              addresses, 127.0.0.2-6, reopening each one it loses) does not keep a real prober
              out: the prober's first connection is answered; no address holds more than its
              share of the connections waiting for a hello;
  fifo_peers  the peers file is a FIFO nobody writes, from the start and swapped in while the
              exporter runs: the responder keeps answering, the list error is counted and
              SIGTERM ends the exporter;
  fifo_token  --mesh-token-file naming a FIFO: the exporter refuses it at once, naming it;
  self_aliases  the node listed under localhost, 127.1 and ::ffff:127.0.0.1 on its own port is
              never probed (nor answers itself);
  reply_flood  a listed peer that floods replies nobody asked for is cut by the prober;
  dns_blackhole  --mesh-dns with a name server that never answers (root: a private resolv.conf in
              a mount namespace; skipped otherwise): the responder answers all along, the late
              lookup is counted and SIGTERM ends the exporter.
Every wait is bounded; no step relies on a sleep finishing in time.
Usage: mesh_hostile_test.py FABSCOPE_BINARY
"""
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

FAB = sys.argv[1]
BOUND = 60  # seconds: the upper bound of any one wait (generous, for a loaded 2-core runner)
TOKEN = "mesh-hostile-0123456789"
procs = []
failures = []
work = tempfile.mkdtemp(prefix="fabscope-mesh-hostile-")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)
    return cond


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def exporter(http, mesh, peers=None, extra=(), token_file=None, wrap=()):
    args = list(wrap) + [FAB, "exporter", "--listen", f"127.0.0.1:{http}", "--checks-interval", "0", "--mesh",
            "--mesh-listen", f"127.0.0.1:{mesh}", "--mesh-rate", "20", "--mesh-timeout-ms", "5000"]
    if peers:
        args += ["--mesh-peers", peers]
    if token_file:
        args += ["--mesh-token-file", token_file]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "FABSCOPE_"))}
    env["FABSCOPE_ROOT"] = ""
    if not token_file:
        env["FABSCOPE_MESH_TOKEN"] = TOKEN
    p = subprocess.Popen(args + list(extra), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    procs.append(p)
    return p


def metrics(http):
    with urllib.request.urlopen(f"http://127.0.0.1:{http}/metrics", timeout=BOUND) as r:
        return r.read().decode()


def sample(text, name, **labels):
    """The value of the first sample of `name` carrying every one of `labels` (0 when none)."""
    want = [f'{k}="{v}"' for k, v in labels.items()]
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            if all(w in line for w in want):
                return float(line.rsplit(" ", 1)[1])
    return 0.0


def wait_until(what, fn):
    end = time.monotonic() + BOUND
    last = None
    while time.monotonic() < end:
        try:
            got = fn()
            if got:
                return got
        except Exception as e:  # not up yet
            last = e
        time.sleep(0.1)
    check(False, f"timed out waiting for {what} (last error: {last})")
    return None


def hello_ok(mesh):
    """A real hello with the token gets the responder's acceptance."""
    with socket.create_connection(("127.0.0.1", mesh), timeout=BOUND) as s:
        s.sendall(f"FSMESH1 {TOKEN}\n".encode())
        return s.recv(8) == b"FSMSHOK\n"


def stopped_by_sigterm(p):
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=BOUND)
        return True
    except subprocess.TimeoutExpired:
        return False


def test_lockout():
    http_b, mesh_b = free_port(), free_port()
    b = exporter(http_b, mesh_b)
    wait_until("node b serving", lambda: "fabscope_mesh_responder_connections" in metrics(http_b))
    stop = threading.Event()
    held = []
    lock = threading.Lock()

    def stranger(source):
        # Idle connections: never a byte; each one the responder cuts is opened again at once.
        socks = []
        while not stop.is_set():
            while len(socks) < 8 and not stop.is_set():
                s = socket.socket()
                s.bind((source, 0))
                try:
                    s.connect(("127.0.0.1", mesh_b))
                except OSError:
                    s.close()
                    break
                socks.append(s)
                with lock:
                    held.append(source)
            ready = select.select(socks, [], [], 0.2)[0] if socks else []
            for s in ready:
                try:
                    data = s.recv(64)
                except OSError:
                    data = b""
                if not data:
                    socks.remove(s)
                    s.close()
        for s in socks:
            s.close()

    threads = [threading.Thread(target=stranger, args=(f"127.0.0.{i}",)) for i in range(2, 7)]
    for t in threads:
        t.start()
    try:
        wait_until("the stranger's 40 connections", lambda: len(held) >= 40)
        wait_until("b's pending slots full",
                   lambda: sample(metrics(http_b), "fabscope_mesh_responder_connections") >= 32)
        peers = os.path.join(work, "peers-lockout.txt")
        with open(peers, "w") as f:
            f.write(f"127.0.0.1:{mesh_b}\n")
        http_a, mesh_a = free_port(), free_port()
        a = exporter(http_a, mesh_a, peers)
        peer = f"127.0.0.1:{mesh_b}"
        wait_until("a's probes of b answered",
                   lambda: sample(metrics(http_a), "fabscope_mesh_probes_answered_total", peer=peer) >= 5)
        text = metrics(http_a)
        connect = sample(text, "fabscope_mesh_probe_errors_total", peer=peer, reason="connect")
        refused = sample(metrics(http_b), "fabscope_mesh_responder_rejected_total", reason="too_many_connections")
        print(f"lockout: a's connect errors {connect:.0f}; b cut {refused:.0f} waiting strangers", flush=True)
        check(connect == 0, f"lockout: the real prober was refused {connect:.0f} time(s) while a stranger held "
                            "idle connections")
        check(refused >= 8, f"lockout: b cut only {refused:.0f} of the stranger's connections")
        check(sample(metrics(http_b), "fabscope_mesh_responder_connections") <= 32 + 1,
              "lockout: more connections than the pending limit plus the prober's")
        check(stopped_by_sigterm(a) and stopped_by_sigterm(b), "lockout: an exporter ignored SIGTERM")
    finally:
        stop.set()
        for t in threads:
            t.join(BOUND)


def test_per_source():
    http_b, mesh_b = free_port(), free_port()
    b = exporter(http_b, mesh_b)
    wait_until("node b serving", lambda: "fabscope_mesh_responder_connections" in metrics(http_b))
    crowd = []
    for _ in range(30):
        s = socket.socket()
        s.bind(("127.0.0.9", 0))
        s.connect(("127.0.0.1", mesh_b))
        crowd.append(s)
    wait_until("b cutting the crowd of one address",
               lambda: sample(metrics(http_b), "fabscope_mesh_responder_rejected_total",
                              reason="too_many_connections") >= 22)
    open_now = sample(metrics(http_b), "fabscope_mesh_responder_connections")
    check(open_now <= 8, f"per_source: one address holds {open_now:.0f} connections waiting for a hello")
    check(hello_ok(mesh_b), "per_source: a real hello from another address was not accepted")
    for s in crowd:
        s.close()
    check(stopped_by_sigterm(b), "per_source: the exporter ignored SIGTERM")


def test_fifo_peers():
    for swapped in (False, True):
        what = "swapped in while running" if swapped else "from the start"
        peers = os.path.join(work, f"peers-fifo-{int(swapped)}")
        if swapped:
            with open(peers, "w") as f:
                f.write("# nobody\n")
        else:
            os.mkfifo(peers)
        http, mesh = free_port(), free_port()
        p = exporter(http, mesh, peers)
        wait_until(f"fifo_peers ({what}): /metrics", lambda: "fabscope_mesh_peer_list_errors_total" in metrics(http))
        if swapped:
            tmp = peers + ".new"
            os.mkfifo(tmp)
            os.rename(tmp, peers)  # a different size and time: the exporter looks at it again
        wait_until(f"fifo_peers ({what}): the FIFO counted as a list error",
                   lambda: sample(metrics(http), "fabscope_mesh_peer_list_errors_total") >= 1)
        check(hello_ok(mesh), f"fifo_peers ({what}): the responder does not answer")
        check(stopped_by_sigterm(p), f"fifo_peers ({what}): SIGTERM ignored (the mesh thread is blocked)")
        err = p.stderr.read().decode(errors="replace")
        check("not a regular file" in err, f"fifo_peers ({what}): stderr does not say why: {err}")


def test_fifo_token():
    token = os.path.join(work, "token-fifo")
    os.mkfifo(token)
    p = exporter(free_port(), free_port(), token_file=token)
    try:
        rc = p.wait(timeout=BOUND)
    except subprocess.TimeoutExpired:
        rc = None
    err = p.stderr.read().decode(errors="replace") if rc is not None else ""
    check(rc == 3, f"fifo_token: exit {rc} (None: blocked opening the FIFO)")
    check(token in err and "not a regular file" in err, f"fifo_token: stderr: {err}")


def test_self_aliases():
    http_b, mesh_b = free_port(), free_port()
    b = exporter(http_b, mesh_b)
    http_a, mesh_a = free_port(), free_port()
    peers = os.path.join(work, "peers-self.txt")
    with open(peers, "w") as f:  # node a under three spellings of itself, and b
        f.write(f"localhost:{mesh_a}\n127.1:{mesh_a}\n[::ffff:127.0.0.1]:{mesh_a}\n127.0.0.1:{mesh_b}\n")
    a = exporter(http_a, mesh_a, peers)
    wait_until("self_aliases: a's probes of b answered",
               lambda: sample(metrics(http_a), "fabscope_mesh_probes_answered_total", peer=f"127.0.0.1:{mesh_b}") >= 10)
    text = metrics(http_a)
    probed = sorted({line.split('peer="')[1].split('"')[0] for line in text.splitlines()
                     if line.startswith("fabscope_mesh_probes_sent_total{")})
    check(probed == [f"127.0.0.1:{mesh_b}"], f"self_aliases: a probed {probed}")
    check(sample(text, "fabscope_mesh_responder_probes_total", result="answered") == 0,
          "self_aliases: a answered probes of its own")
    check(stopped_by_sigterm(a) and stopped_by_sigterm(b), "self_aliases: an exporter ignored SIGTERM")


def test_reply_flood():
    # A listed peer that takes the hello and then sends replies nobody asked for, as fast as
    # the prober reads them.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    peers = os.path.join(work, "peers-flood.txt")
    with open(peers, "w") as f:
        f.write(f"127.0.0.1:{port}\n")
    http_a = free_port()
    # A probe lost only after 10 s: a prober that reads the flood until its probe times out
    # (three times) says "timeout"; one that cuts the flood says "bad_reply" long before.
    a = exporter(http_a, free_port(), peers, extra=["--mesh-transport", "tcp", "--mesh-timeout-ms", "10000"])
    listener.settimeout(BOUND)
    try:
        c, _ = listener.accept()
    except socket.timeout:
        listener.close()
        return check(False, "reply_flood: the prober never dialled")
    c.settimeout(BOUND)
    hello = b""
    while not hello.endswith(b"\n"):
        chunk = c.recv(300)
        if not chunk:
            break
        hello += chunk
    c.sendall(b"FSMSHOK\n")
    burst = b"".join(b"FSMR" + struct.pack(">IQQ", 0x80000000 + i, 0, 0) for i in range(256))
    cut = False
    end = time.monotonic() + BOUND
    sent = 0
    c.settimeout(1)
    while time.monotonic() < end and not cut:
        try:
            sent += c.send(burst)
        except socket.timeout:
            continue
        except OSError:
            cut = True
    print(f"reply_flood: the prober cut the flood after {sent} bytes" if cut else
          f"reply_flood: {sent} bytes read by the prober in {BOUND} s", flush=True)
    check(cut, "reply_flood: the prober kept reading replies nobody asked for")
    c.close()
    listener.close()
    peer = f"127.0.0.1:{port}"
    text = metrics(http_a)
    timeouts = sample(text, "fabscope_mesh_probe_errors_total", peer=peer, reason="timeout")
    bad = sample(text, "fabscope_mesh_probe_errors_total", peer=peer, reason="bad_reply")
    check(timeouts == 0 and bad >= 1, f"reply_flood: the probe ended as {timeouts:.0f} timeout(s), "
                                      f"{bad:.0f} bad_reply (the flood was read until the probe timed out)")
    check(stopped_by_sigterm(a), "reply_flood: the exporter ignored SIGTERM")


def test_dns_blackhole():
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("mount"):
        print("dns_blackhole: skipped (needs root and unshare for a private /etc/resolv.conf)", flush=True)
        return
    # A name server that never answers: a UDP socket nobody reads, the only one in resolv.conf
    # (seen only by the exporter, through a mount namespace of its own).
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        server.bind(("127.0.0.77", 53))
    except OSError as e:
        print(f"dns_blackhole: skipped (cannot bind 127.0.0.77:53: {e})", flush=True)
        return
    resolv = os.path.join(work, "resolv.conf")
    with open(resolv, "w") as f:
        f.write("nameserver 127.0.0.77\noptions timeout:30 attempts:5\n")
    wrap = ["unshare", "-m", "sh", "-c", 'mount --bind "$0" /etc/resolv.conf && exec "$@"', resolv]
    http, mesh = free_port(), free_port()
    p = exporter(http, mesh, extra=["--mesh-dns", "peers.fabscope-mesh-test.example", "--mesh-rotation", "1"],
                 wrap=wrap)
    try:
        wait_until("dns_blackhole: /metrics", lambda: "fabscope_mesh_peer_list_errors_total" in metrics(http))
        check(hello_ok(mesh), "dns_blackhole: the responder does not answer while a lookup hangs")
        wait_until("dns_blackhole: the unanswered lookup counted",
                   lambda: sample(metrics(http), "fabscope_mesh_peer_list_errors_total") >= 1)
        check(hello_ok(mesh), "dns_blackhole: the responder does not answer after the lookup went late")
        check(stopped_by_sigterm(p), "dns_blackhole: SIGTERM ignored (the mesh thread is in getaddrinfo)")
    finally:
        server.close()


for test in (test_lockout, test_per_source, test_fifo_peers, test_fifo_token, test_self_aliases, test_reply_flood,
             test_dns_blackhole):
    t0 = time.monotonic()
    try:
        test()
    except Exception as e:  # a part that behaved unexpectedly: a failure of this scenario, go on
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
print("ok: every hostile peer and file was bounded")
