#!/usr/bin/env bash
# The subnet sweep at scale, side by side with rdma-core's diag tools on the same simulated
# fabric (bench/RESULTS.md, "fabscope fabric sweep"). bench/fabric-bench-setup.sh starts the
# simulated fat tree and names the commands; this runs each command REPS times in alternation (A B C ... A B C ...) and prints per run: wall time, peak RSS
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
here=$(cd "$(dirname "$0")" && pwd)
. "$here/fabric-bench-setup.sh" "$@"

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
low() { tr ' ' '\n' <<<"$1" | grep . | sort -n | head -1; }
printf '%-42s %8s %8s %8s %8s %9s\n' "command" "wall med" "wall min" "CPU med" "CPU min" "max RSS"
for c in "${cmds[@]}"; do
  label=${c%%|*}
  peak=$(tr ' ' '\n' <<<"${rss[$label]}" | grep . | sort -n | tail -1)
  printf '%-42s %8s %8s %8s %8s %5d KiB\n' "$label" "$(med "${times[$label]}")" "$(low "${times[$label]}")" \
    "$(med "${cpus[$label]}")" "$(low "${cpus[$label]}")" "$peak"
done
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
