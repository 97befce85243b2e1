#!/usr/bin/env bash
# `fabscope fabric --slurm-topology / --k8s-labels / --check` on simulated fabrics (ibsim + OpenSM,
# tests/integration/ibsim/harness.sh), the tree file loaded by a real slurmctld:
#   slurm    a 64-HCA fat tree (bench/fattree-topology.py 4 2 16: 4 leaves of 16 hosts, 2 spines;
#            slurm2k: the 2,048-HCA one of bench/fabric-sweep.sh, 64 leaves of 32, 32 spines)
#            swept live; the written topology.conf is loaded by Debian's slurmctld (topology/tree,
#            munge, private configuration; the 64 hosts are nodes without slurmd) and `scontrol
#            show topology` lists every leaf with exactly its 16 hosts and every spine with the 4
#            leaves; a topology.conf that --check refuses (an undefined child switch) is refused by
#            slurmctld too. Needs root and slurmctld, munge; skips (77) otherwise.
#   place    the leaf/spine fabric (tests/fixtures/ibsim/leafspine.net, 6 hosts) with a slurmd for
#            each of three hosts, H-node1 under S-leaf1 and H-node4, H-node5 under S-leaf2
#            (`slurmd -N` on ports of their own); `sbatch -N2 --switches=1` runs on S-leaf2's two,
#            where Slurm without the topology takes the first two by name (H-node1, H-node4).
#            Needs root; skips (77) when this Slurm cannot run several slurmd on one machine.
#   heldout  tests/fixtures/slurm-topology/rails.net (two rails, a re-cabled host, a dead leaf
#            uplink): the tree, block and yaml files and the labels equal the hand-written ones;
#            the notes name gpu01's rails and S-leafC's uplinks; --check of the file from before
#            the re-cabling names gpu03 moved and nothing else; bad inputs exit 3 naming file:line.
# Usage: slurm_topology_ibsim_test.sh SCENARIO FABSCOPE
set -euo pipefail
scenario=$1 fabscope=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
fixtures=$repo/tests/fixtures/slurm-topology
. "$here/ibsim/harness.sh"
sim_skip_unless_available
fail() { echo "FAIL: $*" >&2; exit 1; }
body() { grep -v '^#' "$1"; }  # the lines Slurm reads

need_slurm() {
  local t
  for t in slurmctld munged scontrol "$@"; do
    command -v "$t" >/dev/null || { echo "SKIPPED: $t not installed (apt-get install slurmctld slurmd munge)"; exit 77; }
  done
  [ "$(id -u)" = 0 ] || { echo "SKIPPED: needs root to run Slurm's daemons"; exit 77; }
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# slurm_start DIR NODELINES: munged and slurmctld with a private configuration in DIR, topology/tree
# with DIR/topology.conf; waits until scontrol answers. NODELINES: slurm.conf's NodeName lines.
SLURM_PIDS=()
slurm_stop() {
  local p
  for p in "${SLURM_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${SLURM_PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  SLURM_PIDS=()
}
slurm_conf() {  # slurm_conf DIR NODELINES
  local dir=$1 nodes=$2
  mkdir -p "$dir/state" "$dir/spool"
  cat >"$dir/slurm.conf" <<CONF
ClusterName=fabtopo
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
TopologyPlugin=topology/tree
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
$nodes
PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
}
munge_start() {
  local dir=$1
  mkdir -p "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 700 "$dir/munge"; chmod 400 "$dir/munge/munge.key"
  munged --force -S "$dir/munge/sock" --key-file "$dir/munge/munge.key" --pid-file "$dir/munge/pid" \
    --log-file "$dir/munged.log" --seed-file "$dir/munge/seed" || fail "munged did not start"
  SLURM_PIDS+=("$(cat "$dir/munge/pid")")
}
ctld_start() {  # ctld_start DIR: slurmctld in the foreground of a background job; waits for scontrol
  local dir=$1
  SLURM_CONF=$dir/slurm.conf slurmctld -D -i -f "$dir/slurm.conf" >"$dir/slurmctld.out" 2>&1 &
  SLURM_PIDS+=($!)
  local end=$((SECONDS + 60))
  until SLURM_CONF=$dir/slurm.conf scontrol ping >/dev/null 2>&1; do
    kill -0 "${SLURM_PIDS[-1]}" 2>/dev/null || { cat "$dir/slurmctld.out" >&2; fail "slurmctld exited"; }
    [ $SECONDS -lt $end ] || { cat "$dir/slurmctld.out" >&2; fail "slurmctld did not answer in 60 s"; }
    sleep 0.5
  done
}
# sim_start sets its own EXIT trap: each scenario sets this one after it.
cleanup() { slurm_stop; sim_stop; }

# scontrol show topology as "NAME|NODES|SWITCHES" lines, sorted; each hostlist expanded and sorted.
show_topology() (
  export SLURM_CONF=$1/slurm.conf  # scontrol show hostnames reads it too
  scontrol show topology | python3 -c '
import re, subprocess, sys
def expand(h):
    if not h or h == "(null)": return ""
    out = subprocess.run(["scontrol", "show", "hostnames", h], capture_output=True, text=True, check=True).stdout.split()
    return ",".join(sorted(out))
rows = []
for line in sys.stdin:
    f = dict(re.findall(r"(\w+)=(\S*)", line))
    if "SwitchName" not in f: continue
    leaf = f.get("Level") == "0"  # an upper switch lists every node below it as Nodes= too
    rows.append("%s|%s|%s" % (f["SwitchName"], expand(f.get("Nodes", "")) if leaf else "",
                              "" if leaf else expand(f.get("Switches", ""))))
print("\n".join(sorted(rows)))'
)

case "$scenario" in
slurm | slurm2k)
  need_slurm
  # LEAVES SPINES HOSTS_PER_LEAF: 64 HCAs, or the 2,048 of bench/fabric-sweep.sh.
  read -r leaves spines per_leaf <<<"$([ "$scenario" = slurm ] && echo 4 2 16 || echo 64 32 32)"
  python3 "$repo/bench/fattree-topology.py" "$leaves" "$spines" "$per_leaf" >"${TMPDIR:-/tmp}/fattree-$$.net"
  sim_start "${TMPDIR:-/tmp}/fattree-$$.net" -N 4096 -S 256 -P 16384
  trap cleanup EXIT
  rm -f "${TMPDIR:-/tmp}/fattree-$$.net"
  sm_start H-l00-00
  work=$SIM_DIR/slurm
  mkdir -p "$work"
  sim_run H-l00-00 "$fabscope" fabric --slurm-topology tree -o "$work/topology.conf" >"$work/fabric.out" 2>&1 ||
    { cat "$work/fabric.out" >&2; fail "fabric --slurm-topology exited $?"; }
  head -6 "$work/topology.conf"
  last=$(printf '%02d' $((per_leaf - 1)))
  grep -q "^SwitchName=S-leaf00 Nodes=H-l00-\[00-$last\]\$" "$work/topology.conf" || fail "leaf line"
  # The expected topology, from the drawing of the fat tree (not from fabscope).
  expected=$(python3 - "$leaves" "$spines" "$per_leaf" <<'PY'
import sys
leaves, spines, hosts = map(int, sys.argv[1:])
rows = ["S-leaf%02d|%s|" % (l, ",".join(sorted("H-l%02d-%02d" % (l, h) for h in range(hosts)))) for l in range(leaves)]
rows += ["S-spine%02d||%s" % (s, ",".join(sorted("S-leaf%02d" % l for l in range(leaves)))) for s in range(spines)]
print("\n".join(sorted(rows)))
PY
  )
  munge_start "$work"
  slurm_conf "$work" "NodeName=H-l[00-$(printf '%02d' $((leaves - 1)))]-[00-$last] NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN"
  ctld_start "$work"
  got=$(show_topology "$work")
  if [ "$got" != "$expected" ]; then
    echo "== scontrol show topology"; SLURM_CONF=$work/slurm.conf scontrol show topology
    diff <(echo "$expected") <(echo "$got") || true
    fail "scontrol show topology differs from the fabric"
  fi
  echo "ok: slurmctld loaded the generated topology.conf: $(echo "$got" | wc -l) switches as in the fabric"
  # Slurm's own complaints about a topology (topology_tree's warnings), none expected.
  complaints='switches lack access|Multiple leaf switches|no switch can reach|Invalid node name|invalid child|not a tree'
  ! grep -E "$complaints" "$work/slurmctld.log" || fail "slurmctld complained about the topology"
  slurm_stop

  # A file --check refuses is one slurmctld refuses.
  rc=0
  sim_run H-l00-00 "$fabscope" fabric --check "$fixtures/rejected.conf" >"$work/check.out" 2>&1 || rc=$?
  [ $rc = 3 ] || fail "--check of rejected.conf exited $rc"
  grep -q "rejected.conf:3: switch 'S-spine1' has the undefined switch 'S-leafX' as a child" "$work/check.out" ||
    { cat "$work/check.out"; fail "--check message"; }
  bad=$work/bad
  mkdir -p "$bad"
  cp "$fixtures/rejected.conf" "$bad/topology.conf"
  munge_start "$bad"
  slurm_conf "$bad" "NodeName=gpu[01-02] NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN"
  SLURM_CONF=$bad/slurm.conf timeout 60 slurmctld -D -i -f "$bad/slurm.conf" >"$bad/slurmctld.out" 2>&1 && rc=0 || rc=$?
  [ $rc != 0 ] && [ $rc != 124 ] || fail "slurmctld accepted rejected.conf (exit $rc)"
  grep -q "invalid child (S-leafX)" "$bad/slurmctld.out" "$bad/slurmctld.log" 2>/dev/null ||
    { cat "$bad/slurmctld.out" "$bad/slurmctld.log" 2>/dev/null | tail -5; fail "slurmctld's reason"; }
  echo "ok: rejected.conf refused by --check (exit 3, file:line) and by slurmctld (exit $rc)"
  ;;

place)
  need_slurm slurmd sbatch
  sim_start "$repo/tests/fixtures/ibsim/leafspine.net"
  trap cleanup EXIT
  sm_start H-node1
  work=$SIM_DIR/slurm
  mkdir -p "$work"
  # Only the three hosts that run a slurmd are Slurm's nodes (--nodes): one under S-leaf1, two under S-leaf2.
  sim_run H-node1 "$fabscope" fabric --slurm-topology tree --nodes 'H-node[1,4-5]' -o "$work/topology.conf" \
    >"$work/fabric.out" 2>&1 || { cat "$work/fabric.out" >&2; fail "fabric --slurm-topology"; }
  [ "$(body "$work/topology.conf" | head -2)" = "SwitchName=S-leaf1 Nodes=H-node1
SwitchName=S-leaf2 Nodes=H-node[4-5]" ] || { cat "$work/topology.conf"; fail "topology for --nodes"; }
  munge_start "$work"
  nodes=""
  for n in H-node1 H-node4 H-node5; do
    nodes+="NodeName=$n NodeHostname=$(hostname) NodeAddr=127.0.0.1 Port=$(free_port) CPUs=1 State=UNKNOWN"$'\n'
  done
  slurm_conf "$work" "$nodes"
  ctld_start "$work"
  for n in H-node1 H-node4 H-node5; do
    mkdir -p "$work/spool/$n"
    SLURM_CONF=$work/slurm.conf slurmd -D -N "$n" -f "$work/slurm.conf" >"$work/slurmd-$n.out" 2>&1 &
    SLURM_PIDS+=($!)
  done
  end=$((SECONDS + 60))
  until [ "$(SLURM_CONF=$work/slurm.conf sinfo -h -t idle -o %D 2>/dev/null | head -1)" = 3 ]; do
    if [ $SECONDS -ge $end ]; then
      SLURM_CONF=$work/slurm.conf sinfo -N >&2 || true
      tail -3 "$work"/slurmd-*.out >&2
      echo "SKIPPED: three slurmd on one machine did not all register (this Slurm may be built without"
      echo "         --enable-multiple-slurmd); the tree itself is tested by the slurm scenario"
      exit 77
    fi
    sleep 1
  done
  job=$(SLURM_CONF=$work/slurm.conf sbatch --parsable -N2 --switches=1 -o "$work/job.out" --wrap 'true')
  end=$((SECONDS + 60))
  nodes_of_job=""
  until [ -n "$nodes_of_job" ] && [ "$nodes_of_job" != "(null)" ]; do
    nodes_of_job=$(SLURM_CONF=$work/slurm.conf scontrol show job "$job" | sed -n 's/^ *NodeList=\(\S*\).*/\1/p')
    [ $SECONDS -lt $end ] || { SLURM_CONF=$work/slurm.conf scontrol show job "$job"; fail "job $job not placed"; }
    sleep 1
  done
  [ "$nodes_of_job" = "H-node[4-5]" ] || fail "--switches=1 job ran on $nodes_of_job, not S-leaf2's H-node[4-5]"
  echo "ok: sbatch -N2 --switches=1 ran on $nodes_of_job, the hosts of one leaf"
  ;;

heldout)
  sim_start "$fixtures/rails.net"
  sm_start "gpu02 mlx5_0"
  out=$SIM_DIR/out
  mkdir -p "$out"
  run() {  # run NAME ARGS...: fabscope fabric ARGS attached at gpu02; prints the exit code
    local name=$1 rc=0; shift
    sim_run "gpu02 mlx5_0" "$fabscope" fabric "$@" >"$out/$name.out" 2>"$out/$name.err" || rc=$?
    echo $rc
  }
  rc=$(run save --save "$out/fabric.json")
  [ "$rc" -le 2 ] || { cat "$out/save.err"; fail "fabric --save exited $rc"; }
  for f in tree block yaml; do
    rc=$(run "$f" --slurm-topology "$f" -o "$out/$f")
    [ "$rc" = 1 ] || { cat "$out/$f.out" "$out/$f.err"; fail "--slurm-topology $f exited $rc, not 1 (warnings)"; }
  done
  diff <(body "$fixtures/expected-tree.conf") <(body "$out/tree") || fail "tree differs from expected-tree.conf"
  diff <(body "$fixtures/expected-block.conf") <(body "$out/block") || fail "block differs from expected-block.conf"
  diff <(body "$fixtures/expected.yaml") <(body "$out/yaml") || fail "yaml differs from expected.yaml"
  grep -q '^# note: fabric.topology_host_rails (info): 1 host(s): ' "$out/tree" || fail "no rails note in the file"
  grep -q '^# note: fabric.topology_uplinks_degraded (warn): S-leafC: leaf S-leafC has 1 of the usual 2 uplinks' \
    "$out/tree" || fail "no uplinks note in the file"
  grep -q 'fabric.topology_host_rails' "$out/tree.out" || fail "rails not reported on the terminal"
  echo "ok: tree, block and yaml equal the hand-written files, with the rails and the dead uplink noted"
  # The same from the saved sweep, on any machine.
  rc=0
  "$fabscope" fabric --from "$out/fabric.json" --slurm-topology tree >"$out/tree-from" 2>/dev/null || rc=$?
  [ $rc = 1 ] || fail "--from exited $rc"
  diff <(body "$fixtures/expected-tree.conf") <(body "$out/tree-from") || fail "--from tree differs"
  # Kubernetes labels.
  rc=0
  "$fabscope" fabric --from "$out/fabric.json" --k8s-labels json >"$out/labels.json" 2>/dev/null || rc=$?
  python3 - "$fixtures/expected-labels.json" "$out/labels.json" <<'PY' || fail "labels differ"
import json, sys
want = json.load(open(sys.argv[1])); got = json.load(open(sys.argv[2]))
assert got["schema"] == "fabscope.fabric.k8s-labels", got["schema"]
assert got["nodes"] == want, (got["nodes"], want)
PY
  "$fabscope" fabric --from "$out/fabric.json" --k8s-labels script -o "$out/labels.sh" >/dev/null 2>&1 || true
  grep -q '^kubectl label --overwrite node gpu03 network.topology.nvidia.com/block=S-leafB network.topology.nvidia.com/spine=S-spine1$' \
    "$out/labels.sh" || { cat "$out/labels.sh"; fail "kubectl script"; }
  sh -n "$out/labels.sh" || fail "the label script is not valid sh"
  echo "ok: labels equal expected-labels.json; the kubectl script names gpu03's leaf"
  # --check: the re-cabled host, and nothing else moved.
  rc=0
  "$fabscope" fabric --from "$out/fabric.json" --check "$fixtures/before-recabling.conf" --json >"$out/check.json" \
    2>"$out/check.err" || rc=$?
  [ $rc = 1 ] || { cat "$out/check.err"; fail "--check exited $rc"; }
  python3 - "$out/check.json" <<'PY' || fail "--check findings"
import json, sys
doc = json.load(open(sys.argv[1]))
moved = [f for f in doc["findings"] if f["id"] == "fabric.topology_host_moved"]
assert [f["subject"] for f in moved] == ["gpu03"], moved
assert moved[0]["evidence"].startswith("file_leaf=S-leafA fabric_leaf=S-leafB"), moved[0]["evidence"]
ids = sorted({f["id"] for f in doc["findings"]})
assert "fabric.topology_host_missing" not in ids and "fabric.topology_host_unknown" not in ids, ids
assert "fabric.topology_switch_gone" not in ids, ids
PY
  echo "ok: --check names gpu03 moved from S-leafA to S-leafB, nothing else"
  # Bad inputs: exit 3 naming file:line.
  rc=0
  "$fabscope" fabric --from "$out/fabric.json" --slurm-topology tree --name-map "$fixtures/bad-name-map" \
    >"$out/bad.out" 2>&1 || rc=$?
  [ $rc = 3 ] || fail "bad name map exited $rc"
  grep -q "bad-name-map:4: expected 'GUID NAME'" "$out/bad.out" || { cat "$out/bad.out"; fail "bad name map message"; }
  rc=0
  "$fabscope" fabric --from "$out/fabric.json" --check "$fixtures/rejected.conf" >"$out/rej.out" 2>&1 || rc=$?
  [ $rc = 3 ] || fail "rejected.conf exited $rc"
  grep -q "rejected.conf:3: " "$out/rej.out" || { cat "$out/rej.out"; fail "rejected.conf message"; }
  echo "ok: a bad mapping line and a file Slurm rejects exit 3 with file:line"
  ;;
*) fail "unknown scenario $scenario" ;;
esac
