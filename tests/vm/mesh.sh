#!/usr/bin/env bash
# The probe mesh on a multi-host RDMA testbed: 5 qemu VMs on one virtual Ethernet segment (like
# cluster.sh), each with an rxe device and `fabscope exporter --mesh` probing the other four over
# RDMA (UD). A real Prometheus on this host scrapes each VM's exporter through qemu's port
# forward, with the mesh's rules loaded (deploy/prometheus/fabscope-mesh-rules.yml, the windows,
# durations and RTT thresholds scaled to the testbed: mesh_vm.py says how). Faults, one at a time,
# each asserted in Prometheus and then removed:
#   delay   netem delay on vm3's NIC: exactly the pairs with vm3 slow down by the delay, and the
#           RoCE RTT alert fires for them only; cleared: it resolves
#   loss    netem loss on vm2's NIC: the loss alert fires for vm2's pairs only; cleared: resolves
#   stop    vm4 frozen (QMP stop): its peers count timeouts, the unreachable alert fires for it;
#           meanwhile a stranger sends the other four replies with guessed cookies, and not one
#           is counted as an answer from the frozen node; continued: resolves
#   strangers  a process without the token on vm0 (tests/vm/mesh_forge.c: its own UD queue pair,
#           the mesh's Q_Key, guessed QP numbers and cookies) sends every node's UD queue pair
#           garbage, datagrams of the wrong size or kind, probes, replies and timing datagrams
#           with unknown cookies, then floods one node: each node counts what reached it as from
#           an unknown sender, the real pairs keep answering over RDMA with no reset, and the
#           flooded exporter's CPU stays bounded
# With --perftest N instead: 2 VMs, perftest's ib_send_lat (UD) and the mesh's RTT between them,
# alternating N times (bench/RESULTS.md); --rate R sets the mesh's probes per second (8).
# Usage: tests/vm/mesh.sh [--fabscope PATH] [--prometheus PATH] [--out DIR] [--accel A] [--perftest N]
#                         [--rate R]
# Environment: FABSCOPE_VMCACHE (shared with run.sh), FABSCOPE_VM_ACCEL.
# Exit: 0 passed, 1 an assertion failed, 2 a VM or Prometheus did not come up, 3 usage/setup.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin="${FABSCOPE_BIN:-$repo/build/src/cli/fabscope}" out="" accel_request=${FABSCOPE_VM_ACCEL:-auto}
prometheus=$(command -v prometheus || true) perftest=0 rate=8
while [ $# -gt 0 ]; do
  case "$1" in
    --fabscope) bin=$2; shift ;;
    --prometheus) prometheus=$2; shift ;;
    --out) out=$2; shift ;;
    --accel) accel_request=$2; shift ;;
    --perftest) perftest=$2; shift ;;
    --rate) rate=$2; shift ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "mesh.sh: unknown option '$1'" >&2; exit 3 ;;
  esac
  shift
done
die() { echo "mesh.sh: $*" >&2; exit 3; }
[ -x "$bin" ] || die "fabscope binary '$bin' not found"
[ "$perftest" != 0 ] || [ -x "$prometheus" ] || die "prometheus not found (scripts/install-deps.sh installs it)"
cache=${FABSCOPE_VMCACHE:-$repo/.vmcache}
mkdir -p "$cache/debs"
# shellcheck source=image.sh
. "$here/image.sh"
# shellcheck source=accel.sh
. "$here/accel.sh"
t0=$(date +%s)
vm_packages
vm_base ib_core crc32_generic ib_uverbs rdma_rxe rdma_ucm virtio_pci virtio_net sch_netem -- \
  usr/bin/rdma sbin/tc usr/bin/ib_send_lat
run=$(mktemp -d "${TMPDIR:-/tmp}/fabscope-vmmesh.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "$out" ] && { mkdir -p "$out"; cp -r "$run"/. "$out"/ 2>/dev/null || true; }
  rm -rf "$run"
}
trap cleanup EXIT
strip -o "$run/fabscope" "$bin" 2>/dev/null || cp "$bin" "$run/fabscope"
vm_overlay_fabscope "$run/ov" "$run/fabscope"
# The stranger of the strangers phase, built here against libibverbs (libibverbs-dev); the guest
# has the library (libibverbs1, packages.txt).
cc -O2 -Wall -std=c11 -D_DEFAULT_SOURCE -o "$run/ov/usr/bin/mesh_forge" "$here/mesh_forge.c" -libverbs ||
  die "cannot build tests/vm/mesh_forge.c (scripts/install-deps.sh installs libibverbs-dev)"
install -m 0755 "$here/mesh-init" "$run/ov/init"
vm_cpio "$run/ov" "$run/overlay.cpio.gz"
cat "$base" "$run/overlay.cpio.gz" >"$run/initrd.gz"
vm_choose_accel "$accel_request" "$vmlinuz"
echo "mesh.sh: image ready in $(( $(date +%s) - t0 )) s; accelerator $VM_ACCEL_REASON"

world=5
[ "$perftest" != 0 ] && world=2
port=$(python3 -c 'import random; print(random.randint(20000, 60000))')
fwd=()
for n in $(seq 0 $((world - 1))); do
  fwd+=("$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')")
  mkfifo "$run/ctl$n.in" "$run/ctl$n.out"
  # The console is qemu's stdout (console$n.log); ttyS1 the results, ttyS2 the control pipe.
  vm_qemu "$run/console$n.log" 1500 -smp 1 -m 512 -nographic -no-reboot -monitor none \
    -qmp "unix:$run/qmp$n.sock,server=on,wait=off" \
    -netdev "socket,id=n0,mcast=230.0.0.1:$port,localaddr=127.0.0.1" \
    -device "virtio-net-pci,netdev=n0,mac=52:54:00:12:35:$(printf %02x $((n + 1)))" \
    -netdev "user,id=u0,restrict=on,net=10.0.2.0/24,hostfwd=tcp:127.0.0.1:${fwd[$n]}-10.0.2.15:9417" \
    -device "virtio-net-pci,netdev=u0,mac=52:54:00:12:36:$(printf %02x $((n + 1)))" \
    -serial stdio -serial "file:$run/results$n.b64" -serial "pipe:$run/ctl$n" \
    -kernel "$vmlinuz" -initrd "$run/initrd.gz" \
    -append "console=ttyS0 quiet loglevel=3 panic=-1 no_timer_check rdinit=/init node=$n world=$world rate=$rate" &
  pids+=($!)
  # qemu writes the guest's echo to ctl$n.out: drain it so the pipe never fills.
  cat "$run/ctl$n.out" >/dev/null &
  pids+=($!)
done
rc=0
args=(--run "$run" --world "$world" --ports "$(IFS=,; echo "${fwd[*]}")")
if [ "$perftest" != 0 ]; then
  python3 "$here/mesh_vm.py" "${args[@]}" --perftest "$perftest" || rc=$?
else
  python3 "$here/mesh_vm.py" "${args[@]}" --prometheus "$prometheus" \
    --rules "$repo/deploy/prometheus/fabscope-mesh-rules.yml" || rc=$?
fi
# Every VM got `done` (or is past its limit): wait for them, then read what they sent.
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
pids=()
for n in $(seq 0 $((world - 1))); do
  mkdir -p "$run/vm$n"
  python3 "$here/assert.py" unpack "$run/results$n.b64" "$run/vm$n" >/dev/null 2>&1 ||
    echo "mesh.sh: vm$n sent no results; console: $(tail -5 "$run/console$n.log" | tr '\n' ' ')"
done
if [ "$perftest" != 0 ]; then
  python3 "$here/mesh_vm.py" --run "$run" --world "$world" --ports "$(IFS=,; echo "${fwd[*]}")" \
    --perftest-report "$perftest" || rc=$?
fi
for n in $(seq 0 $((world - 1))); do
  echo "--- vm$n exporter log (last lines)"
  tail -4 "$run/vm$n/exporter.log" 2>/dev/null || true
done
echo "mesh.sh: total $(( $(date +%s) - t0 )) s, exit $rc"
exit $rc
