#!/usr/bin/env bash
# The subnet sweep at scale, side by side with rdma-core's diag tools on the same simulated
# fabric (bench/RESULTS.md, "fabscope fabric sweep"). Writes a two-tier fat tree
# (bench/fattree-topology.py: 64 leaves, 32 spines, 2,048 HCAs), starts ibsim and OpenSM on it
# (tests/integration/ibsim/harness.sh), sets one error counter with PerformanceSet, then runs each
# command REPS times in alternation (A B C ... A B C ...) and prints wall time and peak RSS
# (ru_maxrss of the child from wait4, what /usr/bin/time -v reports) per run and the median.
#
# usage: bench/fabric-sweep.sh DRIVER [REPS] [LEAVES SPINES HCAS_PER_LEAF]
#   DRIVER  the subnet driver program (build/tests/fabscope_subnet_driver); until `fabscope
#           fabric` exists this is how the collector is timed
# env: EXTRA='label|command args;...' adds commands (e.g. other --max-smps/--max-inflight values)
set -euo pipefail
driver=$(realpath "$1")
reps=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/integration/ibsim/harness.sh"
sim_skip_unless_available
topo=$(mktemp "${TMPDIR:-/tmp}/fattree.XXXXXX.net")
python3 "$here/fattree-topology.py" "${3:-64}" "${4:-32}" "${5:-32}" >"$topo"
sim_start "$topo" -N 4096 -S 256 -P 16384
rm -f "$topo"
sm_start H-l00-00
sim_cmd 'PerformanceSet "S-leaf05"[40] PortCounters.SymbolErrorCounter=55'

cmds=(
  "fabscope sweep (defaults)|$driver sweep --quiet"
  "ibqueryerrors|ibqueryerrors"
  "ibqueryerrors -o 64|ibqueryerrors -o 64"
  "fabscope discovery only (--no-counters)|$driver sweep --quiet --no-counters"
  "ibnetdiscover|ibnetdiscover"
  "ibnetdiscover -o 16|ibnetdiscover -o 16"
)
IFS=';' read -r -a extra <<<"${EXTRA:-}"
for e in "${extra[@]}"; do [ -n "$e" ] && cmds+=("${e/\$driver/$driver}"); done

measure() {  # measure COMMAND...: "<wall s> <max RSS KiB> <exit>", the command preloaded, not us
  python3 - "$UMAD2SIM" "$@" <<'PY'
import os, subprocess, sys, time
env = dict(os.environ, LD_PRELOAD=sys.argv[1], SIM_HOST="H-l00-00")
t = time.monotonic()
p = subprocess.Popen(sys.argv[2:], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
print(f"{time.monotonic() - t:.3f} {ru.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
PY
}

declare -A times rss
echo "fabric: $(sim_run H-l00-00 "$driver" sweep --quiet --no-counters)"
for ((r = 1; r <= reps; r++)); do
  for c in "${cmds[@]}"; do
    label=${c%%|*} cmd=${c#*|}
    read -r t m rc < <(measure $cmd)
    printf '%-45s run %d: %7.3f s  %7d KiB  exit %s\n' "$label" "$r" "$t" "$m" "$rc"
    times[$label]+="$t "
    rss[$label]+="$m "
  done
done
echo
printf '%-45s %10s %10s   %s\n' "command" "median s" "max RSS" "runs (s)"
for c in "${cmds[@]}"; do
  label=${c%%|*}
  med=$(tr ' ' '\n' <<<"${times[$label]}" | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  peak=$(tr ' ' '\n' <<<"${rss[$label]}" | grep . | sort -n | tail -1)
  printf '%-45s %10s %7d KiB   %s\n' "$label" "$med" "$peak" "${times[$label]}"
done
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
