#!/usr/bin/env bash
# fabscope cluster under a real mpirun: 4 ranks on this machine, each reading its own copy of the
# soft-RoCE VM capture (FABSCOPE_ROOT per rank), each copy named node0..node3 (the capture's
# hostname is "(none)"). One value changed per scenario, as in tests/fixtures/VARIANTS.md:
#   1. node2's veth0 MTU 1500 (the others 9000): cluster.mtu_differs names node2, exit 1;
#   2. node3's rxe1 port DOWN: cluster.node_fails_check on node3 with link.port_down@rxe1:1 in
#      the drain line, exit 2; pairs all: no RDMA on this machine, so --engine auto falls back to
#      tcp for every pair and says why (6 pairs measured, none failed); --engine rdma reports the
#      6 pairs as not measured, with the reason.
# Usage: cluster_mpi_test.sh FABSCOPE_BINARY
set -euo pipefail
fabscope=$1
src=$(cd "$(dirname "$0")/../fixtures/rxe-vm" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if [ ! -e "$(dirname "$fabscope")/fabscope-mpi.so" ]; then
  echo "SKIPPED: fabscope-mpi.so not built (no MPI development package)"; exit 0
fi
root_flag=()
[ "$(id -u)" = 0 ] && root_flag=(--allow-run-as-root)

make_roots() {
  for r in 0 1 2 3; do
    rm -rf "$work/$r"
    mkdir -p "$work/$r"
    cp -a "$src/proc" "$src/sys" "$work/$r/"
    echo "node$r" > "$work/$r/proc/sys/kernel/hostname"
  done
}
cat > "$work/rank.sh" <<WRAP
#!/bin/sh
FABSCOPE_ROOT="$work/\$OMPI_COMM_WORLD_RANK" exec "$fabscope" cluster "\$@"
WRAP
chmod +x "$work/rank.sh"
run() {  # args for fabscope cluster; sets out and rc
  set +e
  out=$(timeout 120 mpirun "${root_flag[@]}" --oversubscribe -np 4 --mca btl self,tcp "$work/rank.sh" "$@" 2>"$work/err")
  rc=$?
  set -e
}
json() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2]))" "$out" "$1"; }

# 1. MTU mismatch on node2.
make_roots
echo 1500 > "$work/2/sys/devices/virtual/net/veth0/mtu"
run --pairs none --json
[ "$rc" = 1 ] || { cat "$work/err"; echo "$out"; fail "scenario 1: exit $rc, expected 1"; }
[ "$(json "d['launcher']")" = mpi ] || fail "launcher is not mpi"
[ "$(json "len(d['nodes'])")" = 4 ] || fail "not 4 nodes"
[ "$(json "[f['id'] for f in d['findings'] if f['subject']=='net.rdma_mtu'][0]")" = cluster.mtu_differs ] ||
  fail "no cluster.mtu_differs: $out"
[ "$(json "[a['odd'] for a in d['attributes'] if a['key']=='net.rdma_mtu'][0]")" = "['node2']" ] ||
  fail "the odd node is not node2"
echo "ok: MTU mismatch on node2 named (exit 1)"

# The text report marks it and fits 100 columns.
run --pairs none
[ "$rc" = 1 ] || fail "text run exit $rc"
echo "$out" | grep -q '^node2 .*\*1500' || { echo "$out"; fail "text table does not mark node2's 1500"; }
awk 'length > 100 { print "line over 100 columns: " $0; bad = 1 } END { exit bad }' <<<"$out"
echo "ok: text report marks node2, fits 100 columns"

# 2. Port down on node3, every pair measured.
make_roots
echo "1: DOWN" > "$work/3/sys/devices/virtual/infiniband/rxe1/ports/1/state"
run --pairs all --pair-seconds 0.2 --json
[ "$rc" = 2 ] || { cat "$work/err"; echo "$out"; fail "scenario 2: exit $rc, expected 2"; }
[ "$(json "[f['subject'] for f in d['findings'] if f['id']=='cluster.node_fails_check'][0]")" = node3 ] ||
  fail "node3 not named"
json "d['drain'][0]['command']" | grep -qx 'scontrol update NodeName=node3 State=DRAIN Reason="fabscope: link.port_down@rxe1:1"' ||
  fail "drain line: $(json "d['drain']")"
[ "$(json "d['pairwise']['rounds']")" = 3 ] || fail "pairs all over 4 nodes is not 3 rounds"
[ "$(json "len([p for p in d['pairwise']['pairs'] if p['a_to_b_gbps'] and p['b_to_a_gbps']])")" = 6 ] ||
  fail "not 6 measured pairs: $(json "d['pairwise']['pairs']")"
# --engine auto (the default) on a machine without RDMA: every pair falls back to tcp and says
# why, each node says why it offers no RDMA endpoint, and one info finding notes it.
[ "$(json "sorted({p['engine'] for p in d['pairwise']['pairs']})")" = "['tcp']" ] ||
  fail "pairs did not run over tcp: $(json "d['pairwise']['pairs']")"
[ "$(json "d['pairwise']['engine_mode'] + ' ' + d['pairwise']['engine']")" = "auto tcp" ] || fail "engine fields"
[ "$(json "all(p['wall_seconds'] >= 0.4 for p in d['pairwise']['pairs'])")" = True ] ||
  fail "a pair's wall time is below its two 0.2 s directions: $(json "d['pairwise']['pairs']")"
json "d['pairwise']['pairs'][0]['engine_reason']" | grep -q '^fallback: node.* has no usable RDMA endpoint (' ||
  fail "no fallback reason: $(json "d['pairwise']['pairs'][0]")"
[ "$(json "all(n['rdma_address'] == '' and n['rdma_note'] for n in d['nodes'])")" = True ] ||
  fail "nodes do not say why they offer no RDMA: $(json "d['nodes']")"
[ "$(json "[f['severity'] for f in d['findings'] if f['id'] == 'cluster.pair_engine_fallback']")" = "['info']" ] ||
  fail "no info finding for the tcp fallback"
echo "ok: port down on node3 -> drain line; 6 pairs measured over tcp, fallback reason given"

# --engine rdma without RDMA: nothing is measured, every pair is reported with the reason, no hang.
run --pairs all --pair-seconds 0.2 --engine rdma --json
[ "$rc" = 2 ] || { cat "$work/err"; echo "$out"; fail "--engine rdma: exit $rc, expected 2"; }
[ "$(json "all(p['engine'] == '' and 'no usable RDMA endpoint' in p['error'] for p in d['pairwise']['pairs'])")" = True ] ||
  fail "--engine rdma pairs: $(json "d['pairwise']['pairs']")"
[ "$(json "len([f for f in d['findings'] if f['id'] == 'cluster.pair_failed'])")" = 6 ] || fail "not 6 pair_failed"
echo "ok: --engine rdma without RDMA: 6 pairs reported not measured, with the reason"
