#!/usr/bin/env bash
# How often `fabscope cluster --fabric` names the faulty component first, on routes a real
# OpenSM programmed (bench/RESULTS.md, "cluster --fabric: locating slow paths"). Starts ibsim on
# the 2,048-HCA fat tree (bench/fattree-topology.py: 64 leaves x 32 spines) and OpenSM
# (tests/integration/ibsim/harness.sh), saves the sweep with its forwarding tables
# (`fabscope fabric --routes --save`), then runs bench/cluster/localize.cpp over random faults
# for each schedule, fault kind and noise level below.
#
# usage: bench/cluster-localize.sh FABSCOPE LOCALIZE_BENCH [TRIALS] [OUT_DIR]
#   LOCALIZE_BENCH  build/bench/fabscope_localize_bench (cmake --build build --target fabscope_localize_bench)
set -euo pipefail
fabscope=$(realpath "$1") bench=$(realpath "$2") trials=${3:-200}
here=$(cd "$(dirname "$0")" && pwd)
outdir=${4:-$(mktemp -d "${TMPDIR:-/tmp}/localize.XXXXXX")}
mkdir -p "$outdir"
outdir=$(realpath "$outdir")
. "$here/../tests/integration/ibsim/harness.sh"
sim_skip_unless_available
topo=$(mktemp "${TMPDIR:-/tmp}/fattree.XXXXXX.net")
python3 "$here/fattree-topology.py" 64 32 32 >"$topo"
sim_start "$topo" -N 4096 -S 256 -P 16384
rm -f "$topo"
sm_start H-l00-00
rc=0
sim_run H-l00-00 "$fabscope" fabric --routes --save "$outdir/fabric.json" >/dev/null 2>"$outdir/fabric.err" || rc=$?
[ $rc -le 2 ] || { cat "$outdir/fabric.err"; exit 1; }
sim_stop
echo "fabric: $(stat -c %s "$outdir/fabric.json") bytes saved with forwarding tables"
run() { echo "$("$bench" "$outdir/fabric.json" "$@")"; }
for noise in 0.02 0.05 0.10; do
  for fault in cable fibre switch; do
    run 64 all "$fault" "$trials" "$noise" 1
    run 1024 8 "$fault" "$trials" "$noise" 2
    run 64 ring "$fault" "$trials" "$noise" 3
    run 1024 ring "$fault" "$trials" "$noise" 4
  done
done
# Cost at larger job sizes on the same fabric: every HCA, all pairs (2,048) and 8 rounds.
run 2048 8 cable 20 0.02 5
run 2048 all cable 3 0.02 6
