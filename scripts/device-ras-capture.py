#!/usr/bin/env python3
"""Captures what NCCL's RAS service says, byte for byte, for fabscope's tests.

Run on a node where an NCCL (2.24+) job runs, e.g. while `torchrun --nproc_per_node=4 ...` is
training (healthy), and again while one rank is stopped (kill -STOP PID):

    python3 scripts/device-ras-capture.py --addr localhost:28028 --out DIR --tag healthy

For each variant (status: STATUS; verbose: VERBOSE STATUS; json: SET FORMAT json then STATUS,
which servers before NCCL 2.28.7 refuse) it writes DIR/<tag>-<variant>.txt, a transcript:

    # comment lines (address, variant, time, how the exchange ended)
    > N      the client sent the N bytes on the next line(s), then a newline
    < N      the server sent the N bytes that follow, then a newline

Consecutive bytes of one side are one record. tests/integration/ras_stand_in.py replays these
files; tests/unit/job/ras_test.cpp reads the report in each. Standard library only; exits 0 even
when nothing answers (the transcript then says why), 2 on bad arguments.
"""
import argparse
import datetime
import os
import socket
import sys
import time

VARIANTS = {
    "status": ([], "STATUS"),
    "verbose": ([], "VERBOSE STATUS"),
    "json": (["SET FORMAT json"], "STATUS"),
}


def split_addr(text):
    text = text.strip()
    if text.isdigit():
        return "localhost", int(text)
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else 28028
    if text.count(":") == 1:
        host, port = text.split(":")
        return host, int(port)
    return text, 28028


class Transcript:
    def __init__(self):
        self.records = []  # (side, bytes, seconds since start)
        self.t0 = time.monotonic()

    def add(self, side, data):
        if not data:
            return
        now = time.monotonic() - self.t0
        if self.records and self.records[-1][0] == side:
            s, b, t = self.records[-1]
            self.records[-1] = (s, b + data, t)
        else:
            self.records.append((side, data, now))

    def write(self, path, header):
        with open(path, "wb") as f:
            for line in header:
                f.write(("# " + line.replace("\n", " ") + "\n").encode())
            for side, data, t in self.records:
                f.write(("# at %.3f s\n" % t).encode())
                f.write(("%s %d\n" % (side, len(data))).encode())
                f.write(data)
                f.write(b"\n")


def read_line(sock, buf, deadline, tr, cap=4096):
    """One line from the server (bytes without the newline), or None at close or the deadline."""
    while b"\n" not in buf[0]:
        left = deadline - time.monotonic()
        if left <= 0 or len(buf[0]) > cap:
            return None
        sock.settimeout(left)
        try:
            data = sock.recv(65536)
        except socket.timeout:
            return None
        if not data:
            return None
        tr.add("<", data)
        buf[0] += data
    line, _, rest = buf[0].partition(b"\n")
    buf[0] = rest
    return line


def send(sock, text, tr):
    data = (text + "\n").encode()
    sock.sendall(data)
    tr.add(">", data)


def one_variant(host, port, variant, timeout, collective_timeout, max_bytes):
    """Returns (transcript, how it ended, connections tried)."""
    pre, command = VARIANTS[variant]
    deadline = time.monotonic() + timeout
    attempts = 0
    while True:
        attempts += 1
        tr = Transcript()
        try:
            sock = socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic()))
        except OSError as e:
            return tr, "connect failed: %s" % e, attempts
        try:
            buf = [b""]
            send(sock, "CLIENT PROTOCOL 2", tr)
            # Several processes may share the port (SO_REUSEPORT); a stopped one never answers,
            # so a silent handshake is retried on a new connection, as NCCL's client does.
            line = read_line(sock, buf, min(deadline, time.monotonic() + 2), tr)
            if line is None:
                sock.close()
                if time.monotonic() < deadline and not tr.records[1:]:
                    continue
                return tr, "no answer to the handshake", attempts
            if not line.upper().startswith(b"SERVER PROTOCOL "):
                return tr, "not a RAS server", attempts
            steps = (["TIMEOUT %d" % collective_timeout] if collective_timeout else []) + pre
            for step in steps:
                send(sock, step, tr)
                ans = read_line(sock, buf, deadline, tr)
                if ans is None:
                    return tr, "no answer to %s" % step, attempts
                if ans.strip().upper() != b"OK":
                    return tr, "refused %s: %s" % (step, ans.decode(errors="replace")[:200]), attempts
            send(sock, command, tr)
            got = len(buf[0])
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return tr, "timed out after %d bytes of the report" % got, attempts
                sock.settimeout(left)
                try:
                    data = sock.recv(65536)
                except socket.timeout:
                    return tr, "timed out after %d bytes of the report" % got, attempts
                except OSError as e:
                    return tr, "recv: %s after %d bytes" % (e, got), attempts
                if not data:
                    return tr, "closed by the server after %d bytes of the report" % got, attempts
                tr.add("<", data)
                got += len(data)
                if got > max_bytes:
                    return tr, "stopped reading at %d bytes" % got, attempts
        except OSError as e:
            return tr, "socket error: %s" % e, attempts
        finally:
            try:
                sock.close()
            except OSError:
                pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--addr", default=os.environ.get("NCCL_RAS_ADDR", "localhost:28028"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", required=True, help="name of the situation: healthy, stopped-rank2, ...")
    ap.add_argument("--variants", default="status,verbose,json")
    ap.add_argument("--timeout", type=float, default=30, help="seconds per variant (default 30)")
    ap.add_argument("--collective-timeout", type=int, default=0,
                    help="send TIMEOUT N first (the server's per-leg gathering time-out); 0: don't")
    ap.add_argument("--max-bytes", type=int, default=64 << 20)
    a = ap.parse_args()
    try:
        host, port = split_addr(a.addr)
    except ValueError:
        print("bad --addr %r" % a.addr, file=sys.stderr)
        return 2
    variants = [v for v in a.variants.split(",") if v]
    for v in variants:
        if v not in VARIANTS:
            print("unknown variant %r (known: %s)" % (v, ", ".join(VARIANTS)), file=sys.stderr)
            return 2
    if "/" in a.tag or a.tag.startswith("."):
        print("--tag is a plain name", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    for v in variants:
        started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        t0 = time.monotonic()
        tr, ended, attempts = one_variant(host, port, v, a.timeout, a.collective_timeout, a.max_bytes)
        took = time.monotonic() - t0
        path = os.path.join(a.out, "%s-%s.txt" % (a.tag, v))
        header = [
            "fabscope RAS transcript 1 (scripts/device-ras-capture.py)",
            "addr %s:%d variant %s tag %s" % (host, port, v, a.tag),
            "started %s, took %.3f s, %d connection(s)" % (started, took, attempts),
            "ended: %s" % ended,
        ]
        tr.write(path, header)
        received = sum(len(b) for s, b, _ in tr.records if s == "<")
        print("%s: %s (%d bytes received, %.1f s)" % (path, ended, received, took))
    return 0


if __name__ == "__main__":
    sys.exit(main())
