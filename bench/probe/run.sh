#!/usr/bin/env bash
# Probe benchmark: wall time and peak RSS of `fabscope probe --json` (whole process: exec,
# collection, JSON) on a root, over N runs with a warm page cache; prints min/median/p95/max
# wall milliseconds and peak RSS. Usage: bench/probe/run.sh path/to/fabscope [root] [runs]
# root defaults to tests/fixtures/h200x2-node (the largest fixture tree); "/" is the live node
# (adds NVML, libnccl and libcuda loading when present).
set -euo pipefail
fabscope=${1:?path to the fabscope binary}
here=$(cd "$(dirname "$0")/../.." && pwd)
root=${2:-$here/tests/fixtures/h200x2-node}
runs=${3:-50}
python3 - "$fabscope" "$root" "$runs" <<'PY'
import os, statistics, subprocess, sys, time
exe, root, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
args = [exe, "probe", "--json"] + ([] if root == "/" else ["--root", root])
subprocess.run(args, stdout=subprocess.DEVNULL, check=True)  # warm the page cache
walls, rss = [], []
for _ in range(runs):
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    walls.append((time.perf_counter() - t0) * 1000)
    rss.append(ru.ru_maxrss)
    if status != 0:
        sys.exit("fabscope probe exited with status %d" % status)
walls.sort()
p95 = walls[min(len(walls) - 1, int(round(0.95 * len(walls))) - 1)]
print("root %s, %d runs: wall ms min %.2f median %.2f p95 %.2f max %.2f; peak RSS %d KiB"
      % (root, runs, walls[0], statistics.median(walls), p95, walls[-1], max(rss)))
PY
