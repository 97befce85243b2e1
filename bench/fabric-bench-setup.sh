# Sourced by bench/fabric-sweep.sh and bench/fabric-latency.sh with their arguments
# (DRIVER [REPS] [LEAVES SPINES HCAS_PER_LEAF]): starts the fat tree of bench/fabric-tree.sh
# (ibsim and OpenSM), sets one error counter with PerformanceSet, and
# defines what both measure: driver, reps, cmds (each "label|command"; EXTRA='label|command
# args;...' adds commands, $driver replaced; ONLY=1 keeps the EXTRA ones alone) and med.
driver=$(realpath "$1")
reps=${2:-5}
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/fabric-tree.sh"
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
