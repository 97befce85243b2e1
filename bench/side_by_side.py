#!/usr/bin/env python3
"""Runs fabscope bench and nccl-tests alternately on the same GPUs and prints ratio tables.

Every case runs --repeats times per tool; the order of the two tools flips on every repeat so
that drift (clocks, other load) hits both. Rows are parsed from each tool's text table (the same
columns: size, count, type, redop, root, then time/algbw/busbw/#wrong for out-of-place and in
place), the median time per (collective, size, placement) is taken, and the ratio is
fabscope / nccl-tests: below 1 fabscope's time is shorter.

    bench/side_by_side.py --fabscope build/src/cli/fabscope --nccl-tests build-nccl-tests \\
        --out results/ [--repeats 3] [--collectives all_reduce,sendrecv] [--sweep "-b 8 -e 1G -f 8"]

Exit status: 0 when every run ended with status 0 and #wrong 0 everywhere, 1 otherwise.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall",
               "sendrecv", "gather", "scatter", "alltoallv", "hypercube"]


def parse_rows(text):
    """Data rows of an nccl-tests style table: {(size, placement): (time_us, busbw, wrong)}."""
    rows = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        f = line.split()
        # The 8 placement fields are the last ones (hypercube's redop column is empty in
        # nccl-tests, so count from the right); the size is the first field.
        if len(f) < 12 or not f[0].isdigit():
            continue
        try:
            size = int(f[0])
            if len(f) >= 20:  # -I 1: four per-iteration columns after each placement
                oop = (float(f[-16]), float(f[-14]), f[-13])
                ip = (float(f[-8]), float(f[-6]), f[-5])
            else:
                oop = (float(f[-8]), float(f[-6]), f[-5])
                ip = (float(f[-4]), float(f[-2]), f[-1])
        except ValueError:
            continue
        rows.setdefault((size, "oop"), []).append(oop)
        rows.setdefault((size, "ip"), []).append(ip)
    return rows


def run(cmd, log, timeout):
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        out, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace") + "\nTIMEOUT\n", 124
    with open(log, "w") as f:
        f.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n" + out + f"\n# rc={rc} wall={time.monotonic() - t0:.2f}s\n")
    return rc, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fabscope", required=True)
    ap.add_argument("--nccl-tests", required=True, help="directory holding the *_perf binaries")
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--collectives", default=",".join(COLLECTIVES))
    ap.add_argument("--sweep", default="-b 8 -e 1G -f 8", help="size flags given to both tools")
    ap.add_argument("--fabscope-args", default="", help="extra fabscope flags (default: its defaults)")
    ap.add_argument("--nccl-tests-args", default="-g 1", help="extra nccl-tests flags")
    ap.add_argument("--name", default="sweep", help="label of this comparison in the logs and report")
    ap.add_argument("--timeout", type=int, default=300)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    colls = [c for c in a.collectives.split(",") if c]
    ok = True
    medians = {}
    for rep in range(a.repeats):
        for c in colls:
            ours = [a.fabscope, "bench", c, *shlex.split(a.sweep), "--no-progress", *shlex.split(a.fabscope_args)]
            theirs = [os.path.join(a.nccl_tests, c + "_perf"), *shlex.split(a.sweep), *shlex.split(a.nccl_tests_args)]
            order = [("fabscope", ours), ("nccl-tests", theirs)]
            if rep % 2:
                order.reverse()
            for tool, cmd in order:
                rc, out = run(cmd, os.path.join(a.out, f"{a.name}-{c}-{tool}-{rep}.log"), a.timeout)
                rows = parse_rows(out)
                if rc != 0 or not rows:
                    ok = False
                    print(f"# {tool} {c} repeat {rep}: exit {rc}, {len(rows)} rows", file=sys.stderr)
                for key, vals in rows.items():
                    for v in vals:
                        medians.setdefault((c, tool) + key, []).append(v)
    report = {"name": a.name, "sweep": a.sweep, "fabscope_args": a.fabscope_args,
              "nccl_tests_args": a.nccl_tests_args, "repeats": a.repeats, "rows": []}
    lines = [f"### {a.name}: `{a.sweep}`, fabscope `{a.fabscope_args or '(defaults)'}`, "
             f"nccl-tests `{a.nccl_tests_args}`, {a.repeats} alternating runs each", ""]
    for c in colls:
        sizes = sorted({k[2] for k in medians if k[0] == c})
        if not sizes:
            continue
        lines += [f"{c} | size (B) | nccl-tests µs | fabscope µs | ratio | in-place ratio | busbw nccl-tests / fabscope (GB/s) | #wrong",
                  "|---|---:|---:|---:|---:|---:|---:|---|"]
        for s in sizes:
            def med(tool, pl, i):
                v = medians.get((c, tool, s, pl))
                return statistics.median(x[i] for x in v) if v else None
            def wrong(tool):
                w = [x[2] for pl in ("oop", "ip") for x in medians.get((c, tool, s, pl), [])]
                return ",".join(sorted(set(w))) or "?"
            t_n, t_f = med("nccl-tests", "oop", 0), med("fabscope", "oop", 0)
            i_n, i_f = med("nccl-tests", "ip", 0), med("fabscope", "ip", 0)
            b_n, b_f = med("nccl-tests", "oop", 1), med("fabscope", "oop", 1)
            ratio = t_f / t_n if t_n and t_f else None
            iratio = i_f / i_n if i_n and i_f else None
            wf, wn = wrong("fabscope"), wrong("nccl-tests")
            if any(w not in ("0", "N/A") for w in (wf + "," + wn).split(",")):
                ok = False
            fmt = lambda v, p=2: "—" if v is None else f"{v:.{p}f}"
            lines.append(f"| | {s} | {fmt(t_n)} | {fmt(t_f)} | {fmt(ratio, 3)} | {fmt(iratio, 3)} | "
                         f"{fmt(b_n)} / {fmt(b_f)} | {wf} / {wn} |")
            report["rows"].append({"collective": c, "size_bytes": s, "nccl_tests_us": t_n, "fabscope_us": t_f,
                                   "ratio": ratio, "in_place_ratio": iratio, "nccl_tests_busbw": b_n,
                                   "fabscope_busbw": b_f, "wrong_fabscope": wf, "wrong_nccl_tests": wn})
        lines.append("")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(a.out, f"{a.name}.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(a.out, f"{a.name}.json"), "w") as f:
        json.dump(report, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
