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

# --- 1. packages (cached by file name; apt-get download needs no root and installs nothing)
kernel_pkg=${FABSCOPE_VM_KERNEL:-}
if [ -z "$kernel_pkg" ]; then
  kernel_pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  if [ -z "$kernel_pkg" ]; then  # offline: use the kernel already in the cache
    kernel_pkg=$(ls "$cache/debs" | sed -n 's/^\(linux-image-[0-9][^_]*-amd64\)_.*/\1/p' | sort -V | tail -1)
  fi
fi
[ -n "$kernel_pkg" ] || die "no linux-image-*-amd64 package known to apt and none cached in $cache/debs"
mapfile -t pkgs < <(grep -v '^\s*\(#\|$\)' "$here/packages.txt")
pkgs+=("$kernel_pkg")
missing=()
for p in "${pkgs[@]}"; do
  ls "$cache/debs/${p}"_*.deb >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "run.sh: downloading ${missing[*]}"
  (cd "$cache/debs" && apt-get download -q "${missing[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed') ||
    die "apt-get download failed for: ${missing[*]}"
fi
debs=()
for p in "${pkgs[@]}"; do debs+=("$(ls "$cache/debs/${p}"_*.deb | sort -V | tail -1)"); done

# --- 2. base image: kernel modules, user space, libraries (cached by the package set)
modules=(ib_core crc32_generic ib_uverbs rdma_rxe veth rdma_ucm)
key=$( (printf '%s\n' "${debs[@]##*/}" "${modules[@]}"; cat "$here/run.sh" "$here/modules.py") | sha256sum | cut -c1-16)
base="$cache/base-$key.cpio.gz"
vmlinuz="$cache/vmlinuz-$key"
if [ ! -s "$base" ] || [ ! -s "$vmlinuz" ]; then
  echo "run.sh: building base image $key"
  work=$(mktemp -d "$cache/build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  x="$work/x" r="$work/root"
  mkdir -p "$x" "$r"/{bin,sbin,usr/bin,usr/lib/x86_64-linux-gnu,lib64,etc,proc,sys,dev,tmp,run,out}
  for d in "${debs[@]}"; do dpkg -x "$d" "$x"; done
  kver=$(ls "$x/lib/modules" | head -1)
  cp "$x/boot/vmlinuz-$kver" "$work/vmlinuz"
  mdir="$x/lib/modules/$kver"
  mkdir -p "$r/lib/modules/$kver"
  python3 "$here/modules.py" "$mdir" "${modules[@]}" >"$work/order"
  while read -r m; do
    install -D -m 0644 "$mdir/$m" "$r/lib/modules/$kver/$m"
    echo "/lib/modules/$kver/$m" >>"$r/etc/modules.order"
  done <"$work/order"
  echo "$kver" >"$r/etc/kernel-release"
  for d in "${debs[@]}"; do dpkg-deb -f "$d" Package Version | paste -sd' '; done >"$r/etc/packages"
  install -m 0755 "$x/bin/busybox" "$r/bin/busybox"
  # iproute2's ip is installed as ip2: busybox sh runs its own `ip` applet first, and the
  # applet cannot create veth pairs.
  install -m 0755 "$x/sbin/ip" "$r/usr/bin/ip2"
  elfs=("$r/usr/bin/ip2")
  for b in rdma ibv_devinfo ibv_devices ib_write_bw ib_read_lat ib_write_lat ib_read_bw ib_send_bw; do
    install -m 0755 "$x/usr/bin/$b" "$r/usr/bin/$b"; elfs+=("$r/usr/bin/$b")
  done
  # libibverbs dlopens its provider from a driver file; only rxe is needed.
  mkdir -p "$r/etc/libibverbs.d" "$r/usr/lib/x86_64-linux-gnu/libibverbs"
  cp "$x/etc/libibverbs.d/rxe.driver" "$r/etc/libibverbs.d/"
  cp "$x/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so" "$r/usr/lib/x86_64-linux-gnu/libibverbs/"
  elfs+=("$r/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so")
  libpath="$x/usr/lib/x86_64-linux-gnu:$x/lib/x86_64-linux-gnu"
  LD_LIBRARY_PATH=$libpath ldd "${elfs[@]}" >"$work/ldd" 2>&1 || true
  if grep -q 'not found' "$work/ldd"; then die "libraries not found: $(grep 'not found' "$work/ldd" | sort -u | tr '\n' ' ')"; fi
  awk '/=> \// {print $3} $1 ~ /^\/.*ld-linux/ {print $1}' "$work/ldd" | sort -u | while read -r lib; do
    cp -L "$lib" "$r/usr/lib/x86_64-linux-gnu/$(basename "$lib")"
  done
  ln -s usr/lib "$r/lib"
  ln -sf ../usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$r/lib64/ld-linux-x86-64.so.2"
  (cd "$r" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$work/base.cpio.gz"
  mv "$work/base.cpio.gz" "$base"; mv "$work/vmlinuz" "$vmlinuz"
  rm -rf "$work"; trap - EXIT
fi

# --- 3. overlay: this fabscope (with the libraries it links), /init and the scenario
run=$(mktemp -d "${TMPDIR:-/tmp}/fabscope-vm.XXXXXX")
cleanup() { if [ -z "$out" ]; then rm -rf "$run"; fi; }
trap cleanup EXIT
ov="$run/overlay"
mkdir -p "$ov/usr/bin" "$ov/usr/lib/x86_64-linux-gnu" "$ov/etc"
install -m 0755 "$bin" "$ov/usr/bin/fabscope"
{ ldd "$bin" || true; } | awk '/=> \// {print $3}' | while read -r lib; do  # none for a static binary
  cp -L "$lib" "$ov/usr/lib/x86_64-linux-gnu/$(basename "$lib")"
done
install -m 0755 "$here/init" "$ov/init"
install -m 0755 "$here/scenario.sh" "$ov/usr/bin/scenario.sh"
install -m 0755 "$here/capture.sh" "$ov/usr/bin/capture.sh"
printf 'QUICK=%s\nCAPTURE=%s\n' "$quick" "$([ -n "$capture" ] || [ "$quick" = 0 ] && echo 1 || echo 0)" >"$ov/etc/scenario.conf"
(cd "$ov" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$run/overlay.cpio.gz"
# The kernel unpacks concatenated cpio archives in order; later files win.
cat "$base" "$run/overlay.cpio.gz" >"$run/initrd.gz"
echo "run.sh: image ready in $(elapsed "$t0") s (base $key, $(du -k "$run/initrd.gz" | cut -f1) KiB)"

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
