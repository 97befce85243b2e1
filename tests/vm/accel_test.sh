#!/usr/bin/env bash
# Tests tests/vm/accel.sh's choice of accelerator with a stand-in qemu-system-x86_64 on PATH, so
# the KVM fallback stays covered on machines without /dev/kvm. The stand-in behaves like the
# real qemu on a machine whose nested KVM cannot run the guest: under -accel kvm it prints the
# MSR error and aborts (exit 134); under tcg it "boots" and prints what /init would print.
# Modes (STANDIN_KVM): abort (default), works (KVM boots too), hang (KVM never reaches /init),
# guest-fails (the guest reaches /init under KVM, then fails).
# Usage: tests/vm/accel_test.sh      Exit: 0 all passed, 1 a case failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabscope-accel-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
cat >"$tmp/bin/qemu-system-x86_64" <<'QEMU'
#!/usr/bin/env bash
accel="" initrd=""
while [ $# -gt 0 ]; do
  case "$1" in -accel) accel=$2; shift ;; -initrd) initrd=$2; shift ;; esac
  shift
done
echo "$accel" >>"$STANDIN_CALLS"
marker="VM: kernel 6.1.0 up after 2.1 s"
# The probe's initramfs: print what its /init prints (read from the archive itself).
if [ -n "$initrd" ] && zcat "$initrd" 2>/dev/null | grep -aq FABSCOPE-VM-PROBE-INIT-REACHED; then
  marker=FABSCOPE-VM-PROBE-INIT-REACHED
fi
if [ "$accel" = kvm ]; then
  case "${STANDIN_KVM:-abort}" in
    abort)
      echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2
      echo "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion \`ret == cpu->kvm_msr_buf->nmsrs' failed." >&2
      exit 134 ;;
    hang) sleep 30; exit 0 ;;
    works) echo "$marker"; exit 0 ;;
    guest-fails) echo "$marker"; echo "Kernel panic - not syncing: Attempted to kill init!"; exit 1 ;;
  esac
fi
echo "$marker"
exit 0
QEMU
chmod +x "$tmp/bin/qemu-system-x86_64"
# Any executable stands in for busybox: the stand-in qemu only reads the probe archive.
export PATH="$tmp/bin:$PATH" STANDIN_CALLS="$tmp/calls" VM_BUSYBOX=/bin/sh
touch "$tmp/kvm" "$tmp/vmlinuz"
fails=0 n=0
# case NAME EXPECTED-ACCEL REASON-PATTERN: runs the current $body in a subshell.
check() {
  local name=$1 want=$2 pattern=$3 got reason
  n=$((n + 1))
  got=$(cat "$tmp/out.accel" 2>/dev/null || echo "?") reason=$(cat "$tmp/out.reason" 2>/dev/null || echo "?")
  if [ "$got" = "$want" ] && grep -qE -- "$pattern" <<<"$reason"; then
    echo "ok   $name: $got ($reason)"
  else
    echo "FAIL $name: got '$got' ($reason), want '$want' matching /$pattern/"; fails=$((fails + 1))
  fi
}
choose() {  # choose REQUEST [ENV...]: runs vm_choose_accel in a clean subshell
  local request=$1; shift
  rm -f "$tmp/calls" "$tmp/out."*
  env "$@" bash -c '. "$1/accel.sh"; vm_choose_accel "$2" "$3" || exit $?
                    echo "$VM_ACCEL" >"$4/out.accel"; echo "$VM_ACCEL_REASON" >"$4/out.reason"' \
    _ "$here" "$request" "$tmp/vmlinuz" "$tmp"
}

choose auto FABSCOPE_VM_KVM_DEVICE="$tmp/no-such-kvm"
check "auto, no /dev/kvm: tcg without a probe" tcg 'absent or not writable'
[ ! -e "$tmp/calls" ] || { echo "FAIL auto without /dev/kvm ran qemu"; fails=$((fails + 1)); }

choose auto FABSCOPE_VM_KVM_DEVICE="$tmp/kvm" STANDIN_KVM=abort
check "auto, KVM aborts (nested MSR failure): tcg" tcg 'probe boot under KVM failed, qemu exit 134: .*failed to set MSR 0x10a'

choose auto FABSCOPE_VM_KVM_DEVICE="$tmp/kvm" STANDIN_KVM=hang VM_PROBE_TIMEOUT=1
check "auto, KVM guest never reaches /init: tcg" tcg 'did not reach /init within 1 s'

choose auto FABSCOPE_VM_KVM_DEVICE="$tmp/kvm" STANDIN_KVM=works
check "auto, KVM probe boot reaches /init: kvm" kvm 'probe boot under KVM reached /init'

choose tcg FABSCOPE_VM_KVM_DEVICE="$tmp/kvm" STANDIN_KVM=works
check "tcg asked for: tcg, no probe" tcg 'asked for'
[ ! -e "$tmp/calls" ] || { echo "FAIL tcg asked for ran a probe"; fails=$((fails + 1)); }

n=$((n + 1))
if choose bogus 2>"$tmp/err"; then
  echo "FAIL bad request accepted"; fails=$((fails + 1))
elif [ $? = 3 ] && grep -q "unknown accelerator 'bogus'" "$tmp/err"; then
  echo "ok   bad request: exit 3 naming the value"
else
  echo "FAIL bad request: $(cat "$tmp/err")"; fails=$((fails + 1))
fi

# vm_qemu: KVM asked for but the boot aborts -> one more boot under TCG, said on stderr.
n=$((n + 1)); rm -f "$tmp/calls" "$tmp"/console.log*
if STANDIN_KVM=abort bash -c '. "$1/accel.sh"; vm_choose_accel kvm "$2"
      vm_qemu "$3/console.log" 10 -kernel "$2"; rc=$?; echo "$VM_ACCEL" >"$3/final"; exit $rc' \
    _ "$here" "$tmp/vmlinuz" "$tmp" 2>"$tmp/err" &&
   [ "$(cat "$tmp/final")" = tcg ] && [ "$(paste -sd, "$tmp/calls")" = "kvm,tcg" ] &&
   grep -q "failed to set MSR" "$tmp/console.log.kvm" && grep -q "VM: kernel" "$tmp/console.log" &&
   grep -q "booting again under TCG" "$tmp/err"; then
  echo "ok   kvm asked for, boot aborts: one fallback boot under tcg, said on stderr"
else
  echo "FAIL kvm fallback: calls $(paste -sd, "$tmp/calls" 2>/dev/null), stderr: $(cat "$tmp/err")"
  fails=$((fails + 1))
fi

# vm_qemu: a KVM boot that reached /init and then failed is the guest's failure, not KVM's.
n=$((n + 1)); rm -f "$tmp/calls" "$tmp"/console.log*
if STANDIN_KVM=guest-fails bash -c '. "$1/accel.sh"; VM_ACCEL=kvm
      vm_qemu "$3/console.log" 10 -kernel "$2"; rc=$?; exit $rc' \
    _ "$here" "$tmp/vmlinuz" "$tmp" 2>"$tmp/err"; then
  echo "FAIL guest failure after /init: reported success"; fails=$((fails + 1))
elif [ "$(paste -sd, "$tmp/calls")" = "kvm" ] && [ ! -e "$tmp/console.log.kvm" ]; then
  echo "ok   kvm boot that reached /init and failed later: no second boot"
else
  echo "FAIL guest failure after /init: calls $(paste -sd, "$tmp/calls")"; fails=$((fails + 1))
fi

echo "accel_test: $((n - fails))/$n passed"
[ "$fails" = 0 ]
