#!/usr/bin/env bash
# Boots a Debian kernel under qemu with Soft-RoCE (rdma_rxe) and runs the fabscope scenario
# against a real RDMA stack: two rxe devices over a veth pair, probe/check/env, perftest traffic.
# Results come back over a second serial port as a base64 tarball; assert.py judges them here.
#
# Usage: tests/vm/run.sh [--quick] [--fabscope PATH] [--out DIR] [--capture DIR] [--timeout S]
#                        [--accel auto|tcg|kvm]
#   --quick        shorter traffic runs (CI); the full run also captures the fixture tree
#   --fabscope P   the binary to test (default: $FABSCOPE_BIN, else build/src/cli/fabscope)
#   --out DIR      keep the VM's results and console log in DIR (default: a temp dir, removed)
#   --capture DIR  copy the captured sysfs/procfs tree to DIR (e.g. tests/fixtures/rxe-vm)
#   --timeout S    kill qemu after S seconds (default 600)
#   --accel A      auto (default): TCG unless a probe boot under KVM reaches /init; tcg; kvm.
#                  A failed KVM boot falls back to TCG once (tests/vm/accel.sh, docs/vm.md)
# Environment: FABSCOPE_VMCACHE (default <repo>/.vmcache) holds downloaded packages and the
# cached base image; FABSCOPE_VM_KERNEL picks the kernel package; FABSCOPE_VM_ACCEL = --accel.
# Exit: 0 scenario passed, 1 an assertion failed, 2 the VM did not boot or report, 3 usage/setup.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
quick=0 out="" capture="" timeout_s=600 bin="${FABSCOPE_BIN:-$repo/build/src/cli/fabscope}"
accel_request=${FABSCOPE_VM_ACCEL:-auto}
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --fabscope) bin=$2; shift ;;
    --out) out=$2; shift ;;
    --capture) capture=$2; shift ;;
    --timeout) timeout_s=$2; shift ;;
    --accel) accel_request=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option '$1'" >&2; usage >&2; exit 3 ;;
  esac
  shift
done
die() { echo "run.sh: $*" >&2; exit 3; }
case "$accel_request" in auto|tcg|kvm) ;; *) die "unknown --accel '$accel_request' (auto, tcg, kvm)" ;; esac
# shellcheck source=accel.sh
. "$here/accel.sh"
[ -x "$bin" ] || die "fabscope binary '$bin' not found: build it, or pass --fabscope PATH"
for t in qemu-system-x86_64 apt-get dpkg cpio gzip python3 ldd; do
  command -v "$t" >/dev/null || die "'$t' is missing (scripts/install-deps.sh installs it)"
done

cache=${FABSCOPE_VMCACHE:-$repo/.vmcache}
mkdir -p "$cache/debs"
t0=$(date +%s.%N)
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(date +%s.%N)"; }

# --- 1. packages, 2. base image (tests/vm/image.sh: cached by the package set)
# shellcheck source=image.sh
. "$here/image.sh"
vm_packages
vm_base ib_core crc32_generic ib_uverbs rdma_rxe veth rdma_ucm bonding crc32c_generic nf_tables -- \
  usr/bin/rdma usr/bin/ibv_devinfo usr/bin/ibv_devices usr/bin/ib_write_bw usr/bin/ib_read_lat \
  usr/bin/ib_write_lat usr/bin/ib_read_bw usr/bin/ib_send_bw usr/sbin/nft

# --- 3. overlay: this fabscope (with the libraries it links), /init and the scenario
run=$(mktemp -d "${TMPDIR:-/tmp}/fabscope-vm.XXXXXX")
cleanup() { if [ -z "$out" ]; then rm -rf "$run"; fi; }
trap cleanup EXIT
ov="$run/overlay"
vm_overlay_fabscope "$ov" "$bin"
install -m 0755 "$here/init" "$ov/init"
install -m 0755 "$here/scenario.sh" "$ov/usr/bin/scenario.sh"
install -m 0755 "$here/capture.sh" "$ov/usr/bin/capture.sh"
printf 'QUICK=%s\nCAPTURE=%s\n' "$quick" "$([ -n "$capture" ] || [ "$quick" = 0 ] && echo 1 || echo 0)" >"$ov/etc/scenario.conf"
vm_cpio "$ov" "$run/overlay.cpio.gz"
# The kernel unpacks concatenated cpio archives in order; later files win.
cat "$base" "$run/overlay.cpio.gz" >"$run/initrd.gz"
key=${base##*/base-}
echo "run.sh: image ready in $(elapsed "$t0") s (base ${key%.cpio.gz}, $(du -k "$run/initrd.gz" | cut -f1) KiB)"

# --- 4. boot: no network at all, console on ttyS0 (stdout), results on ttyS1 (a file)
vm_choose_accel "$accel_request" "$vmlinuz"
echo "run.sh: accelerator $VM_ACCEL_REASON"
t1=$(date +%s.%N)
qrc=0
vm_qemu "$run/console.log" "$timeout_s" -smp 2 -m 1024 \
  -nographic -no-reboot -nic none -monitor none -serial stdio -serial "file:$run/results.b64" \
  -kernel "$vmlinuz" -initrd "$run/initrd.gz" \
  -append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init" || qrc=$?
vm_s=$(elapsed "$t1")
echo "run.sh: VM ran $vm_s s (qemu exit $qrc, accel $VM_ACCEL)"

# --- 5. results
mkdir -p "$run/results"
if ! python3 "$here/assert.py" unpack "$run/results.b64" "$run/results"; then
  echo "run.sh: no results came back; console tail:" >&2
  tail -40 "$run/console.log" >&2
  [ -n "$out" ] && { mkdir -p "$out"; cp -r "$run"/. "$out"/; }
  exit 2
fi
set +e
python3 "$here/assert.py" check "$run/results"
rc=$?
set -e
if [ -n "$capture" ]; then
  rm -rf "$capture/sys" "$capture/proc"
  python3 "$here/assert.py" capture "$run/results" "$capture" || rc=1
fi
if [ -n "$out" ]; then mkdir -p "$out"; cp -r "$run"/. "$out"/; echo "run.sh: results kept in $out"; fi
echo "run.sh: total $(elapsed "$t0") s"
exit $rc
