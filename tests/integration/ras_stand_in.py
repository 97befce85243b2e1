#!/usr/bin/env python3
"""A stand-in for NCCL's RAS service on loopback, and the test of `fabscope job status --ras`.

  ras_stand_in.py serve --port P --mode MODE [--transcript FILE]
      serves one mode until interrupted (for trying a client by hand; port 0: any, printed);
  ras_stand_in.py test FABSCOPE_BINARY [TRANSCRIPT...]
      runs `fabscope job status --ras 127.0.0.1:PORT` against every mode below and checks the
      exit status and what it says. Transcripts: the files given, else every one in
      tests/fixtures/ras-*/ (real captures, scripts/device-ras-capture.py), else the two
      CONSTRUCTED reports below (written from NCCL's format strings, not captured).

Modes:
  replay      answers as the captured server did: its protocol line, OK to TIMEOUT, its answer
              to SET FORMAT, the captured report to STATUS / VERBOSE STATUS, then closes;
  silent      accepts and never answers;
  trickle     answers the handshake one byte per second, forever;
  endless     a right handshake, then report lines without end;
  garbage     an HTTP answer and binary bytes as its first line;
  midclose    the first half of the report, then closes;
  wrongproto  "SERVER PROTOCOL banana";
  stopped1    the first connection is silent (a stopped process sharing the port), later ones replay.
Every wait is bounded; nothing relies on a sleep finishing in time.
"""
import glob
import os
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
BOUND = 60  # seconds: the upper bound of any one client run (a loaded 2-core runner)

# CONSTRUCTED (not captured): laid out as NCCL 2.28.3's RAS prints a healthy 4-process job.
HEALTHY = (
    "NCCL version 2.28.3+cuda12.9 compiled with CUDA 12.9\n"
    "CUDA runtime version 12090, driver version 13000\n\n"
    "Job summary\n===========\n\n"
    "  Nodes  Processes         GPUs  Processes     GPUs\n"
    "(total)   per node  per process    (total)  (total)\n"
    "      1          4            1          4        4\n\n"
    "Communicators... (0.00s)\n=============\n\n"
    "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
    "    #  in group  per comm  per node  per comm  in group\n"
    "    0         1         1         4         4         4   RUNNING      OK\n\n"
    "Errors\n======\n\n"
    "Warnings\n========\n\n")
# CONSTRUCTED: the same job with rank 3's process stopped.
STOPPED = HEALTHY.replace("(0.00s)", "(5.01s)").replace(
    "4   RUNNING      OK", "3   RUNNING  INCOMPLETE").replace(
    "Errors\n======\n\n",
    "Errors\n======\n\n"
    "INCOMPLETE\n  Missing communicator data from 1 job process\n"
    "  Process 4243 on node 127.0.0.1 managing GPU 3\n\n"
    "#0-0 (7a3f0c2e9b1d4e55) INCOMPLETE\n  Missing communicator data from 1 rank\n"
    "  Rank 3 -- GPU 3 managed by process 4243 on node 127.0.0.1\n\n")


def transcript_from_report(report):
    """A transcript (the capture script's format) of a text server answering STATUS."""
    recs = [(">", b"CLIENT PROTOCOL 2\n"), ("<", b"SERVER PROTOCOL 2\n"), (">", b"STATUS\n"),
            ("<", report.encode())]
    return recs


def read_transcript(path):
    """[(side, bytes)] of a file written by scripts/device-ras-capture.py."""
    data = open(path, "rb").read()
    recs, pos = [], 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl < 0:
            break
        head = data[pos:nl].decode(errors="replace")
        pos = nl + 1
        if not head or head.startswith("#"):
            continue
        side, n = head.split(" ", 1)
        n = int(n)
        recs.append((side, data[pos:pos + n]))
        pos += n + 1
    return recs


class Script:
    """What a replayed server answers, taken from a transcript."""

    def __init__(self, recs):
        self.proto = b"SERVER PROTOCOL 2\n"
        self.answers = {}
        self.report = b""
        last_cmd = None
        for side, data in recs:
            if side == ">":
                last_cmd = data.strip().upper()
            elif last_cmd is not None:
                if last_cmd.startswith(b"CLIENT PROTOCOL"):
                    self.proto = data
                elif last_cmd.endswith(b"STATUS"):
                    self.report += data
                else:
                    self.answers[last_cmd] = self.answers.get(last_cmd, b"") + data
        self.json = self.report.lstrip().startswith(b"{")

    def answer(self, cmd):
        c = cmd.strip().upper()
        if c.startswith(b"TIMEOUT "):
            return b"OK\n"
        if c.startswith(b"SET FORMAT"):
            if c in self.answers:
                return self.answers[c]
            if c == b"SET FORMAT JSON" and self.json or c == b"SET FORMAT TEXT":
                return b"OK\n"
            return b"ERROR: Unknown command " + cmd.strip() + b"\n"
        return b"ERROR: Unknown command " + cmd.strip() + b"\n"


def recv_line(conn, buf, stop):
    while b"\n" not in buf[0]:
        if stop.is_set():
            return None
        conn.settimeout(0.5)
        try:
            d = conn.recv(4096)
        except socket.timeout:
            continue
        except OSError:
            return None
        if not d:
            return None
        buf[0] += d
    line, _, buf[0] = buf[0].partition(b"\n")
    return line


def hold(conn, stop):
    """Keeps the connection open, answering nothing, until the client closes it or the end."""
    while not stop.is_set():
        conn.settimeout(0.5)
        try:
            if not conn.recv(4096):
                return
        except socket.timeout:
            continue
        except OSError:
            return


def serve_conn(conn, mode, script, stop, nth):
    buf = [b""]
    try:
        if mode == "silent" or (mode == "stopped1" and nth == 0):
            hold(conn, stop)
            return
        if recv_line(conn, buf, stop) is None:
            return
        if mode == "garbage":
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\x00\x1b[31m\xff\xfe garbage\n")
            hold(conn, stop)
            return
        if mode == "wrongproto":
            conn.sendall(b"SERVER PROTOCOL banana\n")
            hold(conn, stop)
            return
        if mode == "trickle":
            for b in (script.proto + script.report) * 1000:
                if stop.is_set():
                    return
                conn.sendall(bytes([b]))
                if stop.wait(1.0):
                    return
            return
        conn.sendall(script.proto)
        while True:
            cmd = recv_line(conn, buf, stop)
            if cmd is None:
                return
            c = cmd.strip().upper()
            if c in (b"STATUS", b"VERBOSE STATUS"):
                break
            conn.sendall(script.answer(cmd))
        if mode == "endless":
            line = b"  Rank 1 -- GPU 1 managed by process 1 on node 127.0.0.1\n" * 64
            conn.sendall(b"Errors\n======\n\n")
            while not stop.is_set():
                conn.sendall(line)
            return
        if mode == "midclose":
            conn.sendall(script.report[: len(script.report) // 2])
            return
        conn.sendall(script.report)
    except OSError:
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


class StandIn:
    def __init__(self, mode, script, port=0):
        self.mode, self.script = mode, script
        self.stop = threading.Event()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        self.sock.settimeout(0.5)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            n = self.connections
            self.connections += 1
            threading.Thread(target=serve_conn, args=(conn, self.mode, self.script, self.stop, n),
                             daemon=True).start()

    def close(self):
        self.stop.set()
        self.sock.close()
        self.thread.join(5)


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)
    return cond


def run_client(fab, port, extra=()):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "FABSCOPE_"))}
    env["FABSCOPE_ROOT"] = ""
    t0 = time.monotonic()
    try:
        p = subprocess.run([fab, "job", "status", "--ras", "127.0.0.1:%d" % port] + list(extra),
                           capture_output=True, timeout=BOUND, env=env)
    except subprocess.TimeoutExpired:
        return None, "", time.monotonic() - t0
    out = (p.stdout + p.stderr).decode(errors="replace")
    return p.returncode, out, time.monotonic() - t0


def test(fab, paths):
    help_text = subprocess.run([fab, "job", "status", "--help"], capture_output=True, timeout=BOUND)
    if b"--ras" not in help_text.stdout + help_text.stderr:
        print("SKIPPED: `fabscope job status` has no --ras option in this build")
        return 0
    scripts = []
    if not paths:
        paths = sorted(glob.glob(os.path.join(FIXTURES, "ras-*", "*.txt")))
    for p in paths:
        s = Script(read_transcript(p))
        if s.report:
            scripts.append((os.path.basename(p), s))
    if not scripts:
        scripts = [("constructed-healthy", Script(transcript_from_report(HEALTHY))),
                   ("constructed-stopped", Script(transcript_from_report(STOPPED)))]
    # Replays: the client reads each report; a healthy one exits 0 with no RAS finding.
    for name, s in scripts:
        srv = StandIn("replay", s)
        try:
            rc, out, took = run_client(fab, srv.port)
            check(rc is not None, "%s: the client ended within %d s" % (name, BOUND))
            check(rc in (0, 1, 2), "%s: exit 0, 1 or 2 (got %s): %s" % (name, rc, out[-400:]))
            if "healthy" in name:
                check("job.ras_" not in out, "%s: no RAS finding on a healthy job: %s" % (name, out[-400:]))
            if "stopped" in name:
                check(rc == 2 and "job.ras_missing" in out,
                      "%s: a stopped rank is job.ras_missing, exit 2 (got %s): %s" % (name, rc, out[-400:]))
        finally:
            srv.close()
    base = scripts[0][1]
    # Hostile servers: each one a clear error naming the address, within the bound.
    for mode, words in [("silent", "no answer"), ("trickle", "timed out"), ("endless", "exceeds"),
                        ("garbage", "not a RAS server"), ("midclose", "before the report's end"),
                        ("wrongproto", "not a RAS server")]:
        srv = StandIn(mode, base)
        try:
            rc, out, took = run_client(fab, srv.port)
            check(rc is not None, "%s: the client ended within %d s" % (mode, BOUND))
            check(rc not in (0, None), "%s: a failing exit status (got %s)" % (mode, rc))
            check(words in out and "127.0.0.1:%d" % srv.port in out,
                  "%s: the error says %r and names the address: %s" % (mode, words, out[-400:]))
            check("\x1b" not in out, "%s: no escape byte reaches the terminal" % mode)
        finally:
            srv.close()
    # A stopped process shares the port: the client tries a new connection and is answered.
    srv = StandIn("stopped1", base)
    try:
        rc, out, took = run_client(fab, srv.port)
        check(rc in (0, 1, 2), "stopped1: answered on a later connection (got %s): %s" % (rc, out[-400:]))
        check(srv.connections >= 2, "stopped1: the client connected again (%d)" % srv.connections)
    finally:
        srv.close()
    # Nobody listens.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rc, out, took = run_client(fab, port)
    check(rc not in (0, None) and "refused" in out, "refused: a clear error (got %s): %s" % (rc, out[-400:]))
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "test":
        return test(sys.argv[2], sys.argv[3:])
    if len(sys.argv) >= 2 and sys.argv[1] == "serve":
        import argparse
        ap = argparse.ArgumentParser()
        ap.add_argument("cmd")
        ap.add_argument("--port", type=int, default=0)
        ap.add_argument("--mode", default="replay")
        ap.add_argument("--transcript")
        a = ap.parse_args()
        recs = read_transcript(a.transcript) if a.transcript else transcript_from_report(HEALTHY)
        srv = StandIn(a.mode, Script(recs), a.port)
        print("listening on 127.0.0.1:%d (%s)" % (srv.port, a.mode), flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            srv.close()
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
