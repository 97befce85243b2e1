# Sourced by every script that boots a test VM (bash). Picks qemu's accelerator by what works,
# not by what exists, and boots with a single fallback from KVM to TCG.
#
# Why: on some machines /dev/kvm exists and is writable (nested virtualisation) but qemu aborts
# under KVM before the guest starts:
#   qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69
#   qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion ... failed.
# (-cpu host aborts the same way; -cpu host,-arch-capabilities starts the BIOS but the guest
# kernel prints nothing). TCG works everywhere, so it is the default; KVM is used only when asked
# for or when a short probe boot under KVM reaches the guest's /init.
#
#   vm_choose_accel REQUEST KERNEL
#       REQUEST: auto | tcg | kvm (from --accel or $FABSCOPE_VM_ACCEL; empty = auto).
#       auto: TCG, unless /dev/kvm is writable and a probe boot of KERNEL under KVM prints the
#       probe's marker within $VM_PROBE_TIMEOUT s (default 20). Sets VM_ACCEL (kvm|tcg) and
#       VM_ACCEL_REASON (one line). Returns 3 on a bad REQUEST.
#   vm_qemu LOG TIMEOUT QEMU-ARGS...
#       Runs `qemu-system-x86_64 -accel $VM_ACCEL -cpu max QEMU-ARGS...` with stdout+stderr to
#       LOG, killed after TIMEOUT s. If it ran under KVM, exited non-zero and LOG lacks
#       $VM_INIT_MARKER (the guest never reached /init), LOG is kept as LOG.kvm and the boot is
#       repeated once under TCG, saying so on stderr; VM_ACCEL becomes tcg. Returns qemu's status.
#   vm_accel_args: prints the accelerator arguments for callers that run qemu themselves.
#
# Environment: FABSCOPE_VM_ACCEL (auto|tcg|kvm), FABSCOPE_VM_KVM_DEVICE (default /dev/kvm; tests
# point it elsewhere), VM_PROBE_TIMEOUT, VM_INIT_MARKER (default "VM: kernel", what tests/vm/init
# prints first), VM_BUSYBOX (a static busybox for the probe's initramfs; default: busybox on PATH).

VM_ACCEL=tcg
VM_ACCEL_REASON=""
: "${VM_INIT_MARKER:=VM: kernel}"
vm_probe_marker="FABSCOPE-VM-PROBE-INIT-REACHED"

vm_accel_args() { printf '%s\n' -accel "$VM_ACCEL" -cpu max; }

# The first line of a qemu log that says why it stopped (qemu prefixes its own errors).
vm_qemu_why() {
  local line
  line=$(grep -m1 -E 'qemu-system[^:]*: |Assertion|error' "$1" 2>/dev/null || true)
  [ -n "$line" ] || line=$(tail -n 1 "$1" 2>/dev/null || true)
  printf '%s' "${line:-no output}" | cut -c1-160
}

# A minimal initramfs whose /init prints the marker and powers off: it proves that the kernel
# booted under this accelerator and ran user space, and nothing more.
vm_probe_initrd() {
  local dir=$1 busybox=${VM_BUSYBOX:-}
  [ -n "$busybox" ] || busybox=$(command -v busybox 2>/dev/null || true)
  [ -n "$busybox" ] && [ -x "$busybox" ] || return 1
  mkdir -p "$dir/root/bin" "$dir/root/dev"
  cp "$busybox" "$dir/root/bin/busybox"
  printf '#!/bin/busybox sh\n/bin/busybox echo %s\n/bin/busybox poweroff -f\n' "$vm_probe_marker" \
    >"$dir/root/init"
  chmod 0755 "$dir/root/init"
  (cd "$dir/root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) \
    >"$dir/probe.cpio.gz"
}

vm_choose_accel() {
  local request=${1:-${FABSCOPE_VM_ACCEL:-auto}} kernel=$2
  local kvm_dev=${FABSCOPE_VM_KVM_DEVICE:-/dev/kvm}
  case "$request" in
    tcg) VM_ACCEL=tcg; VM_ACCEL_REASON="tcg (asked for)"; return 0 ;;
    kvm) VM_ACCEL=kvm; VM_ACCEL_REASON="kvm (asked for; falls back to tcg once if the boot fails)"
         return 0 ;;
    auto) ;;
    *) echo "accel: unknown accelerator '$request' (auto, tcg, kvm)" >&2; return 3 ;;
  esac
  VM_ACCEL=tcg
  if [ ! -w "$kvm_dev" ]; then
    VM_ACCEL_REASON="tcg ($kvm_dev is absent or not writable)"
    return 0
  fi
  local tmp rc
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabscope-kvm-probe.XXXXXX")
  if ! vm_probe_initrd "$tmp"; then
    VM_ACCEL_REASON="tcg ($kvm_dev exists, but no static busybox for the KVM probe boot)"
    rm -rf "$tmp"
    return 0
  fi
  rc=0
  timeout "${VM_PROBE_TIMEOUT:-20}" qemu-system-x86_64 -accel kvm -cpu max -smp 1 -m 256 \
    -nographic -no-reboot -nic none -monitor none -serial stdio \
    -kernel "$kernel" -initrd "$tmp/probe.cpio.gz" \
    -append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init" </dev/null >"$tmp/log" 2>&1 ||
    rc=$?
  if grep -q "$vm_probe_marker" "$tmp/log"; then
    VM_ACCEL=kvm
    VM_ACCEL_REASON="kvm (a probe boot under KVM reached /init)"
  elif [ "$rc" = 124 ]; then
    VM_ACCEL_REASON="tcg (a probe boot under KVM did not reach /init within ${VM_PROBE_TIMEOUT:-20} s)"
  else
    VM_ACCEL_REASON="tcg (a probe boot under KVM failed, qemu exit $rc: $(vm_qemu_why "$tmp/log"))"
  fi
  rm -rf "$tmp"
  return 0
}

vm_qemu() {
  local log=$1 limit=$2 rc
  shift 2
  rc=0
  timeout "$limit" qemu-system-x86_64 -accel "$VM_ACCEL" -cpu max "$@" </dev/null >"$log" 2>&1 || rc=$?
  if [ "$VM_ACCEL" = kvm ] && [ "$rc" != 0 ] && ! grep -q "$VM_INIT_MARKER" "$log"; then
    echo "accel: qemu under KVM failed before the guest reached /init (exit $rc: $(vm_qemu_why "$log")); booting again under TCG" >&2
    mv "$log" "$log.kvm"
    VM_ACCEL=tcg
    VM_ACCEL_REASON="tcg (fallback: the KVM boot failed, exit $rc)"
    rc=0
    timeout "$limit" qemu-system-x86_64 -accel tcg -cpu max "$@" </dev/null >"$log" 2>&1 || rc=$?
  fi
  return $rc
}
