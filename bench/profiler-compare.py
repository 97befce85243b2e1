#!/usr/bin/env python3
"""What libnccl-profiler-fabscope.so recorded (a /metrics exposition of `fabscope exporter --jobs`)
against what the program issued and measured.

  profiler-compare.py counts METRICS --nccl-tests W N MINBYTES MAXBYTES FACTOR
      every rank's operations per size equal what nccl-tests issues with -w W -n N -b -e -f
      (-c 0): W warm-up calls at every power of two from MINBYTES to MAXBYTES, and at each size
      of the sweep one sync call and N timed calls, out of place and in place
  profiler-compare.py issued METRICS RANK_JSON...
      every rank's operations per (op, size) equal what bench/profiler-job.py says it issued
  profiler-compare.py busbw METRICS BENCH_LOG [--op AllReduce]
      per size: the plugin's busbw (bus bytes / seconds inside the operations, every rank) beside
      the busbw of an nccl-tests or `fabscope bench` text log (mean of out-of-place and in-place)

Prints one line per size and a last line `RESULT ok|MISMATCH ...`; exit 0 when everything agreed.
"""
import re
import sys
from collections import defaultdict

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def samples(path, name):
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = SAMPLE.match(line)
            if not m or m.group(1) != name:
                continue
            out.append((dict(LABEL.findall(m.group(3) or "")), float(m.group(4))))
    return out


def per(path, name, op=None):
    d = defaultdict(float)  # (comm, rank, op, size) -> value
    for lab, v in samples(path, name):
        if op and lab.get("op") != op:
            continue
        d[(lab["comm"], int(lab["rank"]), lab.get("op", ""), int(lab.get("size", 0)))] += v
    return d


def bench_busbw(path):
    """size -> busbw (GB/s), mean of out-of-place and in-place, from nccl-tests' text columns."""
    out = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 13 and p[0].isdigit() and p[1].isdigit():
                try:
                    out[int(p[0])] = (float(p[7]) + float(p[11])) / 2
                except ValueError:
                    pass
    return out


def main():
    mode, metrics = sys.argv[1], sys.argv[2]
    args = sys.argv[3:]
    op = None
    if "--op" in args:
        op = args[args.index("--op") + 1]
    ok = True
    if mode == "counts":
        i = args.index("--nccl-tests")
        w, n, lo, hi, f = (int(x) for x in args[i + 1:i + 6])
        expect = {}
        size = lo
        while size <= hi:
            expect[size] = w
            size *= 2
        size = lo
        while size <= hi:
            expect[size] += 2 * (n + 1)
            size *= f
        ops = per(metrics, "fabscope_job_operations_total", op)
        sizes = sorted({k[3] for k in ops} | set(expect))
        for s in sizes:
            want = expect.get(s, 0)
            vals = sorted({(k[0], k[1]): v for k, v in ops.items() if k[3] == s}.items())
            counts = [int(v) for _, v in vals]
            good = all(c == want for c in counts)
            ok &= good
            print(f"size {s:>11} ranks {len(counts)} counts {counts} expected {want} {'ok' if good else 'MISMATCH'}")
        print("RESULT", "ok" if ok and sizes else "MISMATCH")
    elif mode == "issued":
        import json
        ops = per(metrics, "fabscope_job_operations_total")
        for path in args:
            j = json.load(open(path))
            rank = j["rank"]
            got = defaultdict(int)
            for (comm, r, o, s), v in ops.items():
                if r == rank:
                    got[f"{o}/{s}"] += int(v)
            for key, n in sorted(j["issued"].items()):
                good = got.get(key, 0) == n
                ok &= good
                if not good:
                    print(f"rank {rank} {key}: issued {n}, recorded {got.get(key, 0)} MISMATCH")
            print(f"rank {rank}: {len(j['issued'])} (op, size) pairs checked; plugin rss KiB {j['rss_kib']}")
        print("RESULT", "ok" if ok else "MISMATCH")
    elif mode == "busbw":
        ref = bench_busbw(args[0])
        bus = per(metrics, "fabscope_job_bus_bytes_total", op)
        sec = per(metrics, "fabscope_job_operation_seconds_sum", op)
        by_size = defaultdict(lambda: [0.0, 0.0])
        for k, v in bus.items():
            by_size[k[3]][0] += v
            by_size[k[3]][1] += sec.get(k, 0.0)
        for s in sorted(by_size):
            b, t = by_size[s]
            mine = b / t / 1e9 if t > 0 else 0.0
            r = ref.get(s)
            ratio = f"{mine / r:6.3f}" if r else "   n/a"
            print(f"size {s:>11} plugin busbw {mine:8.2f} GB/s  log busbw {r if r is not None else float('nan'):8.2f}"
                  f"  plugin/log {ratio}")
        print("RESULT", "ok" if by_size else "MISMATCH")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
