#!/usr/bin/env bash
# deploy/slurm/fabscope-prolog.sh against the real fabscope binary on the soft-RoCE capture:
# warnings let the job run, a failure drains the node through scontrol (a stand-in that records
# its arguments) and fails the prolog, a broken fabscope never drains.
# Usage: slurm_prolog_test.sh FABSCOPE_BINARY
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
prolog=$repo/deploy/slurm/fabscope-prolog.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
expect() {  # expect WHAT ACTUAL WANTED
  if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: got '$2', want '$3'"; fails=$((fails + 1)); fi
}
mkdir -p "$work/bin"
cat >"$work/bin/scontrol" <<SH
#!/bin/sh
printf '%s\n' "\$@" >"$work/scontrol.args"
SH
chmod +x "$work/bin/scontrol"
export PATH="$work/bin:$PATH" FABSCOPE="$bin" SLURMD_NODENAME=node17

# The capture as it is: warnings only (memlock, socket buffers).
cp -r "$repo/tests/fixtures/rxe-vm" "$work/ok"
FABSCOPE_ROOT="$work/ok" "$prolog" 2>"$work/err1"
expect "warnings: prolog exits 0" "$?" 0
expect "warnings: no drain" "$([ -e "$work/scontrol.args" ] && echo drained || echo none)" none
grep -q "warnings on node17: .*os.memlock_limited@node" "$work/err1"
expect "warnings: logged with their ids" "$?" 0

# One value changed: rxe1's port DOWN, a fail finding.
cp -r "$repo/tests/fixtures/rxe-vm" "$work/down"
echo "1: DOWN" >"$work/down/sys/class/infiniband/rxe1/ports/1/state"
FABSCOPE_ROOT="$work/down" "$prolog" 2>"$work/err2"
expect "port down: prolog exits 1" "$?" 1
args=$(tr '\n' ' ' <"$work/scontrol.args" 2>/dev/null)
expect "port down: scontrol drains the node with the failing id" \
  "$(echo "$args" | grep -c 'update nodename=node17 state=drain reason=fabscope: .*link.port_down@rxe1:1')" 1
rm -f "$work/scontrol.args"

# Draining switched off: the prolog still fails, scontrol is not called.
FABSCOPE_PROLOG_DRAIN=0 FABSCOPE_ROOT="$work/down" "$prolog" 2>/dev/null
expect "drain off: prolog exits 1" "$?" 1
expect "drain off: no drain" "$([ -e "$work/scontrol.args" ] && echo drained || echo none)" none

# fabscope itself fails (a root that does not exist: exit 3): the job runs, nothing drains.
FABSCOPE_ROOT="$work/missing" "$prolog" 2>"$work/err3"
expect "fabscope error: prolog exits 0" "$?" 0
expect "fabscope error: no drain" "$([ -e "$work/scontrol.args" ] && echo drained || echo none)" none
grep -q "could not run on node17 (exit 3)" "$work/err3"
expect "fabscope error: logged with its exit code" "$?" 0

[ "$fails" -eq 0 ] && echo "slurm prolog: all passed" || { echo "slurm prolog: $fails failed"; exit 1; }
