#!/usr/bin/env bash
# The subnet sweep beside rdma-core's diag tools when every management packet takes time to be
# answered (bench/RESULTS.md, "MADs scheduled by destination"). ibsim answers at once, from one
# thread: bench/mad-latency-shim.c, preloaded before umad2sim into the measured command only (not
# OpenSM, not the simulator), holds each answer back by a latency model. Models (MODELS, each
# "label|RTT_US|SERVICE_US"): none; a 20 µs and a 200 µs round trip answered in parallel; a 20 µs
# round trip plus 200 µs per MAD at each destination, one at a time (a switch's management
# processor). Per model the commands run REPS times in alternation; per run: wall time and peak
# RSS (ru_maxrss of the child from wait4, what /usr/bin/time -v reports); then medians (of the
# runs that exited 0 or 1) and the ratios of the diag tools' medians to fabscope's.
#
# usage: bench/fabric-latency.sh DRIVER [REPS] [LEAVES SPINES HCAS_PER_LEAF]
#   DRIVER  the subnet driver program (build/tests/fabscope_fabric_driver)
# The fabric and the commands are bench/fabric-bench-setup.sh's, as for bench/fabric-sweep.sh.
# env: EXTRA='label|command args;...' adds commands ($driver is replaced; e.g. other --max-per-dest
#      values), ONLY=1 runs the EXTRA commands alone (no ratios), MODELS as above
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/fabric-bench-setup.sh" "$@"
shim=$(mktemp "${TMPDIR:-/tmp}/mad-latency-shim.XXXXXX.so")
trap 'sim_stop; rm -f "$shim"' EXIT
${CC:-cc} -O2 -shared -fPIC -o "$shim" "$here/mad-latency-shim.c" -ldl
IFS=';' read -r -a models <<<"${MODELS:-none|0|0;20 us parallel|20|0;200 us parallel|200|0;20 us + 200 us per destination, serialised|20|200}"

measure() {  # measure RTT SERVICE COMMAND...: "<wall s> <max RSS KiB> <exit>"
  python3 - "$shim:$UMAD2SIM" "$@" <<'PY'
import os, subprocess, sys, time
env = dict(os.environ, LD_PRELOAD=sys.argv[1], SIM_HOST="H-l00-00",
           MADLAT_RTT_US=sys.argv[2], MADLAT_SERVICE_US=sys.argv[3])
t = time.monotonic()
p = subprocess.Popen(sys.argv[4:], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
print(f"{time.monotonic() - t:.3f} {ru.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
PY
}

echo "fabric: $(sim_run H-l00-00 "$driver" sweep --quiet --no-counters)"
for m in "${models[@]}"; do
  IFS='|' read -r mlabel rtt svc <<<"$m"
  declare -A times=() rss=()
  echo "== model: $mlabel (round trip $rtt us, per-destination service $svc us)"
  for ((r = 1; r <= reps; r++)); do
    for c in "${cmds[@]}"; do
      label=${c%%|*} cmd=${c#*|}
      read -r t kib rc < <(measure "$rtt" "$svc" $cmd)
      printf '%-45s run %d: %8.3f s  %7d KiB  exit %s\n' "$label" "$r" "$t" "$kib" "$rc"
      # ibqueryerrors exits 1 when it finds the counter set above; a crash is no measurement
      if [ "$rc" = 0 ] || [ "$rc" = 1 ]; then times[$label]+="$t " rss[$label]+="$kib "
      else echo "  (exit $rc: left out of the median)"; fi
    done
  done
  [ -n "${ONLY:-}" ] && { for c in "${cmds[@]}"; do printf '%-45s %9s\n' "${c%%|*}" "$(med "${times[${c%%|*}]}")"; done; unset times rss; continue; }
  base=$(med "${times[${cmds[0]%%|*}]}") disc=$(med "${times[${cmds[3]%%|*}]}")
  printf '%-45s %9s %9s %10s\n' "command" "wall med" "peak RSS" "÷ fabscope"
  for i in "${!cmds[@]}"; do
    label=${cmds[$i]%%|*}
    peak=$(tr ' ' '\n' <<<"${rss[$label]}" | grep . | sort -n | tail -1)
    ref=$base; case "$label" in *discover*|*discovery*) ref=$disc ;; esac
    printf '%-45s %9s %5d KiB %9.2fx\n' "$label" "$(med "${times[$label]}")" "$peak" \
      "$(awk -v a="$(med "${times[$label]}")" -v b="$ref" 'BEGIN {print a / b}')"
  done
  unset times rss
done
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
