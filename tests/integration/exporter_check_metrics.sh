#!/usr/bin/env bash
# Lints one exposition of the real procfs capture with `promtool check metrics` (names, units,
# help, types), and checks that every family has HELP and TYPE.
# Usage: exporter_check_metrics.sh FABSCOPE PROMTOOL FIXTURE_TTAR
set -euo pipefail
fabscope=$1 promtool=$2 archive=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/../support/ttar.py" "$archive" "$work/root"
"$fabscope" exporter --once --checks-interval 0 --root "$work/root" > "$work/metrics.txt"
"$promtool" check metrics < "$work/metrics.txt"
families=$(grep -c '^# TYPE ' "$work/metrics.txt")
helps=$(grep -c '^# HELP ' "$work/metrics.txt")
[ "$families" -gt 20 ] || { echo "only $families families"; exit 1; }
[ "$families" -eq "$helps" ] || { echo "$families TYPE lines but $helps HELP lines"; exit 1; }
echo "ok: $families families, $(grep -vc '^#' "$work/metrics.txt") samples, promtool clean"
