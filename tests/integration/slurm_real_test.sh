#!/usr/bin/env bash
# Real Slurm on this machine: munged, slurmctld and slurmd (Debian packages) with a private
# configuration, one node. The shipped deploy/slurm/fabscope-prolog.sh is the Prolog:
#   1. a root with rxe1's port DOWN: the job's prolog fails, the node is DRAINED with
#      "fabscope: link.port_down@rxe1:1" in its reason, as `scontrol show node` prints it;
#   2. resumed, the healthy root: a job runs and the node is back IDLE;
#   3. fabscope cluster --drain on the failing root drains it with the cluster's ids.
# Needs root (slurmd runs jobs as their user) and the slurmctld, slurmd, munge packages; skips
# otherwise. Usage: slurm_real_test.sh FABSCOPE_BINARY
set -euo pipefail
fabscope=$(readlink -f "$1")
repo=$(cd "$(dirname "$0")/../.." && pwd)
for t in slurmctld slurmd munged scontrol sbatch; do
  command -v "$t" >/dev/null || { echo "SKIPPED: $t not installed (apt-get install slurmctld slurmd munge)"; exit 0; }
done
[ "$(id -u)" = 0 ] || { echo "SKIPPED: needs root to run slurmd"; exit 0; }
work=$(mktemp -d /tmp/fabscope-slurm.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.log; do echo "== $f" >&2; tail -20 "$f" >&2; done
  exit 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
node=fabnode1

# Fixture roots: the soft-RoCE capture named like the Slurm node, and a copy with a port down.
for r in ok down; do
  mkdir -p "$work/$r"
  cp -a "$repo/tests/fixtures/rxe-vm/proc" "$repo/tests/fixtures/rxe-vm/sys" "$work/$r/"
  echo "$node" >"$work/$r/proc/sys/kernel/hostname"
done
echo "1: DOWN" >"$work/down/sys/devices/virtual/infiniband/rxe1/ports/1/state"

# munge with its own key and socket.
mkdir -p "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$work/munge"; chmod 400 "$work/munge/munge.key"
munged --force -S "$work/munge/sock" --key-file "$work/munge/munge.key" --pid-file "$work/munge/pid" \
  --log-file "$work/munged.log" --seed-file "$work/munge/seed" || fail "munged did not start"
pids+=("$(cat "$work/munge/pid")")

# The prolog Slurm runs: the shipped one, with the root chosen by a file.
echo "$work/down" >"$work/which-root"
cat >"$work/prolog.sh" <<SH
#!/bin/sh
export FABSCOPE="$fabscope" FABSCOPE_ROOT="\$(cat "$work/which-root")" PATH=/usr/bin:/bin:/usr/sbin:/sbin
exec "$repo/deploy/slurm/fabscope-prolog.sh"
SH
chmod +x "$work/prolog.sh"

mkdir -p "$work/state" "$work/spool"
cat >"$work/slurm.conf" <<CONF
ClusterName=fabscope
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
Prolog=$work/prolog.sh
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$node NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf
slurmctld -D -i -f "$work/slurm.conf" >"$work/slurmctld.out.log" 2>&1 &
pids+=($!)
slurmd -D -N "$node" -f "$work/slurm.conf" >"$work/slurmd.out.log" 2>&1 &
pids+=($!)

state() { scontrol show node "$node" 2>/dev/null | sed -n 's/.* State=\([^ ]*\).*/\1/p'; }
wait_for() {  # seconds pattern
  local end=$(( $(date +%s) + $1 ))
  while [ "$(date +%s)" -lt "$end" ]; do
    [[ "$(state)" =~ $2 ]] && return 0
    sleep 1
  done
  return 1
}
wait_for 60 '^IDLE' || fail "node never became IDLE (state '$(state)')"
echo "ok: slurmctld + slurmd + munged up, $node IDLE"

# 1. Failing root: the prolog drains the node.
sbatch -N1 -o "$work/job1.log" --wrap true >/dev/null
wait_for 60 'DRAIN' || fail "node not drained after the failing prolog (state '$(state)')"
shown=$(scontrol show node "$node")
echo "$shown" | grep -q 'Reason=fabscope: link.port_down@rxe1:1' || fail "drain reason: $shown"
echo "ok: failing root -> $(state), $(echo "$shown" | grep -o 'Reason=[^[]*')"

# 2. Healthy root: resumed, a job runs, the node is IDLE again.
scancel --user=root 2>/dev/null || true
echo "$work/ok" >"$work/which-root"
scontrol update NodeName="$node" State=RESUME
wait_for 30 '^IDLE' || fail "node not IDLE after resume (state '$(state)')"
sbatch -N1 -o "$work/job2.log" --wrap 'echo ran' >/dev/null
end=$(( $(date +%s) + 60 ))
until grep -q ran "$work/job2.log" 2>/dev/null || [ "$(date +%s)" -ge "$end" ]; do sleep 1; done
grep -q ran "$work/job2.log" || fail "job did not run on the healthy root"
wait_for 30 '^IDLE' || fail "node not IDLE after the healthy job (state '$(state)')"
echo "ok: healthy root -> job ran, $node $(state)"

# 3. fabscope cluster --drain on the failing root: the cluster's verdict drains the node.
port=$(free_port)
set +e
RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port FABSCOPE_CLUSTER_TOKEN=t FABSCOPE_ROOT="$work/down" \
  "$fabscope" cluster --pairs none --drain >"$work/cluster.log" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] || fail "fabscope cluster exit $rc (expected 2): $(cat "$work/cluster.log")"
grep -q "^drained:" "$work/cluster.log" || fail "cluster did not report the drain: $(cat "$work/cluster.log")"
wait_for 10 'DRAIN' || fail "fabscope cluster --drain did not drain (state '$(state)')"
scontrol show node "$node" | grep -q 'Reason=fabscope: link.port_down@rxe1:1' || fail "cluster drain reason"
echo "ok: fabscope cluster --drain -> $(state)"
