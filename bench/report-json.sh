#!/usr/bin/env bash
# Reading a cluster result of 1,024 nodes (--pairs all: 523,776 pairs) and of 8,192 nodes (128
# random rounds: 524,288 pairs), both SYNTHETIC (tests/support/cluster_synthetic.cpp): the JSON
# reader against nlohmann's parser alone on the same bytes (bench/json/parse_input.cpp), then
# `fabscope report` on each, wall time and peak RSS (GNU time). Results: bench/RESULTS.md.
# Usage: bench/report-json.sh [BUILD_DIR]   (default build; builds the three targets it needs)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake --build "$build" --target fabscope fabscope_cluster_synthetic fabscope_json_bench >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/tests/fabscope_cluster_synthetic" 1024 1 all >"$work/cluster-1024.json"
"$build/tests/fabscope_cluster_synthetic" 8192 1 128 >"$work/cluster-8192.json"
echo "# $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
"$build/src/report/fabscope_json_bench" "$work/cluster-1024.json" "$work/cluster-8192.json"
for n in 1024 8192; do
  /usr/bin/time -f "report $n nodes: %e s, %M KB peak RSS" "$build/src/cli/fabscope" report \
    "$work/cluster-$n.json" -o "$work/report-$n.html" >/dev/null
  echo "  page: $(stat -c %s "$work/report-$n.html") bytes"
done
