#!/usr/bin/env bash
# Log parser benchmark: builds a ~1 GB multi-rank NCCL log by repeating the real fixture logs
# (tests/fixtures/nccl-logs/h200x2 and public/) with the pid rewritten per copy (256 distinct
# ranks), then times `fabscope log` on one core against `grep -c` on the same file.
# Usage: bench/nccllog-bench.sh path/to/fabscope [size_mb] [workdir]
set -euo pipefail
fabscope=${1:?path to the fabscope binary}
size_mb=${2:-1024}
work=${3:-$(mktemp -d)}
mkdir -p "$work"
here=$(cd "$(dirname "$0")/.." && pwd)
log="$work/nccl-bench.log"
python3 - "$here/tests/fixtures/nccl-logs" "$log" "$size_mb" <<'PY'
import os, re, sys
root, out, size_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = []
for d in ("h200x2", "h200x2/per-rank", "public"):
    for f in sorted(os.listdir(os.path.join(root, d))):
        if f.endswith(".log"):
            files.append(open(os.path.join(root, d, f), encoding="utf-8", errors="replace").read())
blob = "".join(files)
pid = re.compile(r"^((?:\[[^\]]*\] )?[\w.-]+):(\d+):(\d+) ", re.M)
target = size_mb * 1024 * 1024
written, copy = 0, 0
with open(out, "w") as o:
    while written < target:
        off = (copy % 256) * 100000
        chunk = pid.sub(lambda m: "%s:%d:%s " % (m.group(1), int(m.group(2)) + off, m.group(3)), blob)
        o.write(chunk)
        written += len(chunk)
        copy += 1
PY
bytes=$(stat -c %s "$log")
echo "file: $log ($bytes bytes)"
cat "$log" > /dev/null  # warm the page cache for both tools
run() {  # stdout goes to a file: GNU grep stops at the first match when it is /dev/null
  # prints CPU seconds (user+sys) and peak RSS (KiB) of a command pinned to CPU 0
  /usr/bin/time -f "%U %S %M" taskset -c 0 "$@" > "$work/stdout.txt" 2> "$work/time.txt" || true
  tail -1 "$work/time.txt" | awk '{ printf "%.2f %s\n", $1 + $2, $3 }'
}
for i in 1 2 3; do
  read -r s rss < <(run "$fabscope" log "$log")
  echo "fabscope log: ${s}s $(python3 -c "print(round($bytes/1e6/max($s, 0.01)))") MB/s peak RSS ${rss} KiB"
  read -r s rss < <(run grep -c "NCCL INFO" "$log")
  echo "grep -c:      ${s}s $(python3 -c "print(round($bytes/1e6/max($s, 0.01)))") MB/s peak RSS ${rss} KiB"
done
