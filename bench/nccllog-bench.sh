#!/usr/bin/env bash
# Log parser benchmark: `fabscope log --json` on one core against two line counters on the same
# file in the same run, alternating: `awk '/NCCL/{n++}END{print n}'` (what a user would write
# first; the anchor of the speed goal) and `grep -c "NCCL INFO"`.
#   mix     (default) a multi-rank log built by repeating the real fixture logs
#           (tests/fixtures/nccl-logs/h200x2 and public/) with the pid rewritten per copy (256
#           distinct ranks per round);
#   public  the public logs as they are (public/, issues/, wild/ and the h200x2 runs)
#           concatenated and repeated to the size: excerpts of many shapes, WARN and framework
#           lines, launcher prefixes.
# Usage: bench/nccllog-bench.sh path/to/fabscope [size_mb] [workdir] [mix|public] [runs]
set -euo pipefail
fabscope=${1:?path to the fabscope binary}
size_mb=${2:-1024}
work=${3:-$(mktemp -d)}
corpus=${4:-mix}
runs=${5:-5}
case "$corpus" in mix|public) ;; *) echo "nccllog-bench.sh: corpus must be mix or public, not '$corpus'" >&2; exit 2;; esac
mkdir -p "$work"
here=$(cd "$(dirname "$0")/.." && pwd)
log="$work/nccl-bench-$corpus.log"
python3 - "$here/tests/fixtures/nccl-logs" "$log" "$size_mb" "$corpus" <<'PY'
import os, re, sys
root, out, size_mb, corpus = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
dirs = ("h200x2", "h200x2/per-rank", "public") if corpus == "mix" else ("public", "issues", "wild", "h200x2")
files = []
for d in dirs:
    for f in sorted(os.listdir(os.path.join(root, d))):
        if f.endswith(".log"):
            files.append(open(os.path.join(root, d, f), "rb").read())
blob = b"".join(files)
pid = re.compile(rb"^((?:\[[^\]]*\] )?[\w.-]+):(\d+):(\d+) ", re.M)
target = size_mb * 1024 * 1024
written, copy = 0, 0
with open(out, "wb") as o:
    while written < target:
        if corpus == "mix":
            off = (copy % 256) * 100000
            chunk = pid.sub(lambda m: b"%s:%d:%s " % (m.group(1), int(m.group(2)) + off, m.group(3)), blob)
        else:
            chunk = blob
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
mbps() { python3 -c "print(round($bytes/1e6/max($1, 0.001)))"; }
fs=() aw=() gr=()
for i in $(seq "$runs"); do
  read -r s rss < <(run "$fabscope" log --json "$log")
  fs+=("$s"); echo "fabscope log --json: ${s}s $(mbps "$s") MB/s peak RSS ${rss} KiB"
  read -r s rss < <(run awk '/NCCL/{n++}END{print n}' "$log")
  aw+=("$s"); echo "awk /NCCL/ count:    ${s}s $(mbps "$s") MB/s peak RSS ${rss} KiB"
  read -r s rss < <(run grep -c "NCCL INFO" "$log")
  gr+=("$s"); echo "grep -c:             ${s}s $(mbps "$s") MB/s peak RSS ${rss} KiB"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
f=$(median "${fs[@]}") a=$(median "${aw[@]}") g=$(median "${gr[@]}")
echo "median CPU s: fabscope $f, awk $a, grep $g"
python3 -c "print('speed of fabscope against awk: %.2fx (>= 1.0 is as fast); against grep -c: %.2fx' % ($a/max($f,1e-3), $g/max($f,1e-3)))"
