# Sourced by bench/fabric-sweep.sh and bench/fabric-latency.sh with their arguments
# (DRIVER [REPS] [LEAVES SPINES HCAS_PER_LEAF]): writes the two-tier fat tree
# (bench/fattree-topology.py: 64 leaves, 32 spines, 2,048 HCAs by default), starts ibsim and OpenSM
# on it (tests/integration/ibsim/harness.sh), sets one error counter with PerformanceSet, and
# defines what both measure: driver, reps, cmds (each "label|command"; EXTRA='label|command
# args;...' adds commands, $driver replaced; ONLY=1 keeps the EXTRA ones alone) and med.
driver=$(realpath "$1")
reps=${2:-5}
bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$bench_dir/../tests/integration/ibsim/harness.sh"
sim_skip_unless_available
topo=$(mktemp "${TMPDIR:-/tmp}/fattree.XXXXXX.net")
python3 "$bench_dir/fattree-topology.py" "${3:-64}" "${4:-32}" "${5:-32}" >"$topo"
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

med() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
