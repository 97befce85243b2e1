#!/usr/bin/env bash
# The subnet sweep at scale, side by side with rdma-core's diag tools on the same simulated
# fabric (bench/RESULTS.md, "fabscope fabric sweep"). Writes a two-tier fat tree
# (bench/fattree-topology.py: 64 leaves, 32 spines, 2,048 HCAs), starts ibsim and OpenSM on it
# (tests/integration/ibsim/harness.sh), sets one error counter with PerformanceSet, then runs each
# command REPS times in alternation (A B C ... A B C ...) and prints per run: wall time, peak RSS
# (ru_maxrss of the child from wait4, what /usr/bin/time -v reports), and CPU time of the command
# plus the simulator's during it (/proc/PID/stat, 10 ms ticks): on a loaded machine wall time
# swings with other load, the CPU both sides spend is the work the command asks for. The summary
# has the median and the minimum of each.
#
# usage: bench/fabric-sweep.sh DRIVER [REPS] [LEAVES SPINES HCAS_PER_LEAF]
#   DRIVER  the subnet driver program (build/tests/fabscope_fabric_driver); until `fabscope
#           fabric` exists this is how the collector is timed
# env: EXTRA='label|command args;...' adds commands (e.g. other --max-smps/--max-inflight values);
#      ONLY=1 runs the EXTRA commands alone (e.g. the forwarding-table reads against dump_fts)
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
[ -n "${ONLY:-}" ] && cmds=()
IFS=';' read -r -a extra <<<"${EXTRA:-}"
for e in "${extra[@]}"; do [ -n "$e" ] && cmds+=("${e/\$driver/$driver}"); done

measure() {  # measure COMMAND...: "<wall s> <max RSS KiB> <exit> <CPU s>", the command preloaded, not us
  python3 - "$UMAD2SIM" "$SIM_PID" "$@" <<'PY'
import os, subprocess, sys, time
def sim_cpu():
    f = open(f"/proc/{sys.argv[2]}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
env = dict(os.environ, LD_PRELOAD=sys.argv[1], SIM_HOST="H-l00-00")
c0 = sim_cpu()
t = time.monotonic()
p = subprocess.Popen(sys.argv[3:], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
wall = time.monotonic() - t
cpu = ru.ru_utime + ru.ru_stime + sim_cpu() - c0
print(f"{wall:.3f} {ru.ru_maxrss} {os.waitstatus_to_exitcode(status)} {cpu:.2f}")
PY
}

declare -A times rss cpus
echo "fabric: $(sim_run H-l00-00 "$driver" sweep --quiet --no-counters)"
for ((r = 1; r <= reps; r++)); do
  for c in "${cmds[@]}"; do
    label=${c%%|*} cmd=${c#*|}
    read -r t m rc cpu < <(measure $cmd)
    printf '%-45s run %d: %7.3f s  %7d KiB  exit %s  CPU %s s\n' "$label" "$r" "$t" "$m" "$rc" "$cpu"
    times[$label]+="$t "
    rss[$label]+="$m "
    cpus[$label]+="$cpu "
  done
done
echo
med() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
low() { tr ' ' '\n' <<<"$1" | grep . | sort -n | head -1; }
printf '%-42s %8s %8s %8s %8s %9s\n' "command" "wall med" "wall min" "CPU med" "CPU min" "max RSS"
for c in "${cmds[@]}"; do
  label=${c%%|*}
  peak=$(tr ' ' '\n' <<<"${rss[$label]}" | grep . | sort -n | tail -1)
  printf '%-42s %8s %8s %8s %8s %5d KiB\n' "$label" "$(med "${times[$label]}")" "$(low "${times[$label]}")" \
    "$(med "${cpus[$label]}")" "$(low "${cpus[$label]}")" "$peak"
done
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
