# Sourced by bench/fabric-bench-setup.sh and bench/fabric-exporter-bench.sh with their arguments
# (... [LEAVES SPINES HCAS_PER_LEAF] as $3 $4 $5): writes the two-tier fat tree
# (bench/fattree-topology.py: 64 leaves, 32 spines, 2,048 HCAs by default) and starts ibsim and
# OpenSM (at H-l00-00) on it through tests/integration/ibsim/harness.sh, whose sim_stop ends both.
# Sets bench_dir.
bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$bench_dir/../tests/integration/ibsim/harness.sh"
sim_skip_unless_available
topo=$(mktemp "${TMPDIR:-/tmp}/fattree.XXXXXX.net")
python3 "$bench_dir/fattree-topology.py" "${3:-64}" "${4:-32}" "${5:-32}" >"$topo"
sim_start "$topo" -N 4096 -S 256 -P 16384
rm -f "$topo"
sm_start H-l00-00
