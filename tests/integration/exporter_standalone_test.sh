#!/usr/bin/env bash
# fabscope-exporter is `fabscope exporter` in a binary of its own: the same exposition of the
# real procfs capture, the same flags and exit codes, no shared C++ runtime and no GPU, MPI or
# verbs library among what it needs at start.
# Usage: exporter_standalone_test.sh FABSCOPE FABSCOPE_EXPORTER FIXTURE_TTAR
set -euo pipefail
fabscope=$1 standalone=$2 archive=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
python3 "$here/../support/ttar.py" "$archive" "$work/root"

# Equal but for the one sample that times the scrape itself.
timing='^fabscope_scrape_duration_seconds '
"$fabscope" exporter --once --checks-interval 0 --root "$work/root" 2>/dev/null | grep -v "$timing" > "$work/all-in-one.txt"
"$standalone" --once --checks-interval 0 --root "$work/root" 2>/dev/null > "$work/standalone-full.txt"
grep -v "$timing" "$work/standalone-full.txt" > "$work/standalone.txt"
diff -u "$work/all-in-one.txt" "$work/standalone.txt" || fail "expositions differ"
grep -q "$timing" "$work/standalone-full.txt" || fail "no fabscope_scrape_duration_seconds"
# With the start-up checks, every check id has a status.
# (Into a file first: grep -q leaves at the first match, and under pipefail the exporter's
# SIGPIPE on the rest of the exposition would read as a failure.)
"$standalone" --once --root "$work/root" 2>/dev/null > "$work/with-checks.txt"
grep -q '^fabscope_check_status{' "$work/with-checks.txt" || fail "no fabscope_check_status"

"$standalone" --help > "$work/help.txt" || fail "--help exited $?"
grep -q -- '--listen' "$work/help.txt" || fail "--help does not list --listen"
# Its help names the program that runs: its usage line and its examples.
first=$(head -1 "$work/help.txt")
case "$first" in "Usage: fabscope-exporter [options]"*) ;; *) fail "--help's usage line: $first" ;; esac
if grep -q '^  fabscope exporter' "$work/help.txt"; then fail "--help's examples say 'fabscope exporter'"; fi
rc=0; "$standalone" --no-such-flag > /dev/null 2>&1 || rc=$?
[ $rc -eq 3 ] || fail "an unknown flag exited $rc, not 3"
rc=0; "$standalone" --json > /dev/null 2>&1 || rc=$?
[ $rc -eq 3 ] || fail "--json without --once exited $rc, not 3"

needed=$(readelf -d "$standalone" | grep NEEDED || true)
for lib in libstdc++ libmpi libnccl libcudart libnvidia-ml libibverbs; do
  if grep -q "$lib" <<<"$needed"; then fail "$lib is a NEEDED entry of fabscope-exporter"; fi
done
echo "ok: same exposition as fabscope exporter ($(grep -vc '^#' "$work/standalone-full.txt") samples), NEEDED: $(grep -o '\[.*\]' <<<"$needed" | tr '\n' ' ')"
