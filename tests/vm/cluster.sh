#!/usr/bin/env bash
# Multi-host RDMA testbed: several qemu VMs, each with its own kernel and an rxe device on its own
# NIC, on one virtual Ethernet segment (qemu's multicast socket netdev: no root, no bridge), each
# running `fabscope cluster` under the env contract. One fault per scenario; each asserts that
# rank 0's report names the right node:
#   slow    vm3's NIC shaped to 1 Mbit/s (tc tbf), 5 VMs     -> cluster.slow_node vm3, every pair
#           over rdma (--engine auto), the rxe packet counters grew
#   mtu     vm2's NIC at MTU 1400, the others 1500, 3 VMs   -> cluster.mtu_differs vm2
#   norxe   no rxe device on vm1, 3 VMs                     -> cluster.rdma_missing vm1; vm1's pairs
#           fall back to tcp with the reason (cluster.pair_engine_fallback), vm0<->vm2 over rdma
#   absent  vm2 never starts fabscope, 3 VMs               -> cluster.node_missing vm2, in time
# Usage: tests/vm/cluster.sh [--fabscope PATH] [--only SCENARIO] [--out DIR] [--accel A]
# Environment: FABSCOPE_VMCACHE (shared with run.sh), FABSCOPE_VM_ACCEL.
# Exit: 0 every scenario passed, 1 an assertion failed, 2 a VM did not report, 3 usage/setup.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin="${FABSCOPE_BIN:-$repo/build/src/cli/fabscope}" only="" out="" accel_request=${FABSCOPE_VM_ACCEL:-auto}
while [ $# -gt 0 ]; do
  case "$1" in
    --fabscope) bin=$2; shift ;;
    --only) only=$2; shift ;;
    --out) out=$2; shift ;;
    --accel) accel_request=$2; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cluster.sh: unknown option '$1'" >&2; exit 3 ;;
  esac
  shift
done
die() { echo "cluster.sh: $*" >&2; exit 3; }
[ -x "$bin" ] || die "fabscope binary '$bin' not found"
cache=${FABSCOPE_VMCACHE:-$repo/.vmcache}
mkdir -p "$cache/debs"
# shellcheck source=image.sh
. "$here/image.sh"
# shellcheck source=accel.sh
. "$here/accel.sh"
t0=$(date +%s)
vm_packages
# ib_write_bw brings librdmacm into the image (the rdma pair engine dlopens it) and is there to
# compare by hand.
vm_base ib_core crc32_generic ib_uverbs rdma_rxe rdma_ucm virtio_pci virtio_net sch_tbf -- \
  usr/bin/rdma sbin/tc usr/bin/ib_write_bw
run=$(mktemp -d "${TMPDIR:-/tmp}/fabscope-vmcluster.XXXXXX")
trap '[ -n "$out" ] && { mkdir -p "$out"; cp -r "$run"/. "$out"/; }; rm -rf "$run"' EXIT
# Five VMs of 512 MiB each unpack the image: the binary without its debug info.
strip -o "$run/fabscope" "$bin" 2>/dev/null || cp "$bin" "$run/fabscope"
vm_overlay_fabscope "$run/ov" "$run/fabscope"
install -m 0755 "$here/cluster-init" "$run/ov/init"
vm_cpio "$run/ov" "$run/overlay.cpio.gz"
cat "$base" "$run/overlay.cpio.gz" >"$run/initrd.gz"
vm_choose_accel "$accel_request" "$vmlinuz"
echo "cluster.sh: image ready in $(( $(date +%s) - t0 )) s; accelerator $VM_ACCEL_REASON"

# boot NAME WORLD FAULTY_NODE FAULT: WORLD VMs at once on a segment of their own (a random
# multicast port per scenario, so parallel runs never see each other's frames). no_timer_check:
# with several TCG guests on two loaded cores the kernel's IO-APIC timer check can time out and
# panic ("IO-APIC + timer doesn't work").
boot() {
  local name=$1 world=$2 bad=$3 fault=$4
  local dir="$run/$name" port pids=() n f
  mkdir -p "$dir"
  port=$(python3 -c 'import random; print(random.randint(20000, 60000))')
  for n in $(seq 0 $((world - 1))); do
    f=none; [ "$n" = "$bad" ] && f=$fault
    vm_qemu "$dir/console$n.log" 400 -smp 1 -m 512 -nographic -no-reboot -monitor none \
      -netdev "socket,id=n0,mcast=230.0.0.1:$port,localaddr=127.0.0.1" \
      -device "virtio-net-pci,netdev=n0,mac=52:54:00:12:34:$(printf %02x $((n + 1)))" \
      -serial stdio -serial "file:$dir/results$n.b64" -kernel "$vmlinuz" -initrd "$run/initrd.gz" \
      -append "console=ttyS0 quiet loglevel=3 panic=-1 no_timer_check rdinit=/init node=$n world=$world fault=$f" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || true; done
  for n in $(seq 1 $((world - 1))); do  # the other nodes' rxe counters (best effort)
    mkdir -p "$dir/vm$n"
    python3 "$here/assert.py" unpack "$dir/results$n.b64" "$dir/vm$n" >/dev/null 2>&1 || rm -rf "$dir/vm$n"
  done
  mkdir -p "$dir/vm0"
  python3 "$here/assert.py" unpack "$dir/results0.b64" "$dir/vm0" ||
    { rm -rf "$dir/vm0"; echo "cluster.sh: $name: rank 0 did not report; console:"; tail -30 "$dir/console0.log"; return 2; }
}

check() {  # scenario python-expression-over-d (the rank-0 JSON), description
  python3 - "$run/$1/vm0" "$2" "$3" <<'PY'
import json, sys, os
d = json.load(open(os.path.join(sys.argv[1], "cluster.json")))
ids = {(f["id"], f["subject"]) for f in d["findings"]}
names = {n["rank"]: n["name"] for n in d["nodes"]}
# engine_of("vm0", "vm2"): the engine that measured that pair.
def engine_of(x, y):
    return [p["engine"] for p in d["pairwise"]["pairs"] if {names.get(p["a"]), names.get(p["b"])} == {x, y}][0]
# rxe packets each node sent and received during the run (its rxe0 hw_counters), where it reported.
def rxe_grew(node):
    vm = os.path.join(os.path.dirname(sys.argv[1]), node)
    try:
        before, after = (dict(l.split() for l in open(os.path.join(vm, f))) for f in ("rxe_before.txt", "rxe_after.txt"))
        grew = {k: int(after[k]) - int(before[k]) for k in before}
    except (OSError, ValueError, KeyError) as e:
        print(f"{node}: no rxe counters ({e})")
        return False
    print(f"{node}: rxe packets during the run: {grew}")
    return all(v > 1000 for v in grew.values())
ok = eval(sys.argv[2], {"d": d, "ids": ids, "any": any, "all": all, "os": os, "sys": sys, "engine_of": engine_of,
                        "rxe_grew": rxe_grew})
print(("ok: " if ok else "FAIL: ") + sys.argv[3])
if not ok:
    print(json.dumps({k: d[k] for k in ("missing", "findings", "pairwise")}, indent=1)[:6000])
sys.exit(0 if ok else 1)
PY
}

rc=0
scenario() {
  local name=$1; shift
  [ -n "$only" ] && [ "$only" != "$name" ] && return 0
  local s=$(date +%s)
  boot "$name" "$@" || { rc=2; return 0; }
  echo "cluster.sh: $name: VMs done in $(( $(date +%s) - s )) s"
}
scenario slow 5 3 slow
# Only the slow node is asserted: TCP between TCG guests on two busy cores swings by 10x at
# times, so a pair of healthy VMs may dip below half the median (a slow link, printed here).
[ -d "$run/slow/vm0" ] && { check slow '[s["rank"] for s in d["pairwise"]["slow_nodes"]] == [3] and ("cluster.slow_node", "vm3") in ids and print("slow links:", d["pairwise"]["slow_links"]) is None' \
  "slow: vm3 (tbf 1 Mbit/s) is the one slow node" || rc=1
  # A pair of vm3 may fail between loaded TCG guests (its writes crawl through the shaper); the
  # pairs of the healthy nodes may not. Failed pairs are printed.
  check slow 'd["pairwise"]["engine"] == "rdma" and d["pairwise"]["pairs_by_engine"] == {"rdma": 10} and all(p["a_to_b_gbps"] and p["b_to_a_gbps"] for p in d["pairwise"]["pairs"] if 3 not in (p["a"], p["b"])) and print("failed pairs:", [(p["a"], p["b"], p["error"]) for p in d["pairwise"]["pairs"] if p["error"]]) is None and print("pair wall s:", sorted(round(p["wall_seconds"] or 0, 1) for p in d["pairwise"]["pairs"])) is None' \
    "slow: all 10 pairs ran over rdma (RDMA WRITE through RDMA CM), judged over rdma; the healthy pairs all measured" || rc=1
  check slow 'all([rxe_grew("vm0")] + [rxe_grew(f"vm{n}") for n in range(1, 5) if os.path.isdir(os.path.join(os.path.dirname(sys.argv[1]), f"vm{n}"))])' \
    "slow: the rxe packet counters grew on every node that reported them" || rc=1; }
scenario mtu 3 2 mtu
[ -d "$run/mtu/vm0" ] && { check mtu '("cluster.mtu_differs", "net.rdma_mtu") in ids and [a["odd"] for a in d["attributes"] if a["key"] == "net.rdma_mtu"] == [["vm2"]]' \
  "mtu: vm2's MTU 1400 is the odd value" || rc=1; }
scenario norxe 3 1 norxe
[ -d "$run/norxe/vm0" ] && { check norxe '("cluster.rdma_missing", "vm1") in ids' "norxe: vm1 cannot do RDMA" || rc=1
  check norxe 'engine_of("vm0", "vm2") == "rdma" and engine_of("vm0", "vm1") == "tcp" and engine_of("vm1", "vm2") == "tcp" and all("vm1 has no usable RDMA endpoint" in p["engine_reason"] for p in d["pairwise"]["pairs"] if p["engine"] == "tcp") and ("cluster.pair_engine_fallback", "vm1") in ids and all(p["a_to_b_gbps"] and p["b_to_a_gbps"] for p in d["pairwise"]["pairs"])' \
    "norxe: vm1's pairs fell back to tcp with the reason, vm0<->vm2 ran over rdma, nothing blocked" || rc=1; }
scenario absent 3 2 absent
[ -d "$run/absent/vm0" ] && { check absent '[m["name"] for m in d["missing"]] == ["vm2"] and any(f["id"] == "cluster.node_missing" for f in d["findings"])' \
  "absent: vm2 named missing" || rc=1; }
echo "cluster.sh: total $(( $(date +%s) - t0 )) s"
exit $rc
