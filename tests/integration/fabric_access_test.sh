#!/usr/bin/env bash
# The subnet collector's access: the program that links it (the driver links all of
# fabscope_fabric) carries no NEEDED entry for rdma-core's management libraries, which it opens
# with dlopen; without libibumad it names the package to install; and on a node without any RDMA
# device the sweep says so (AccessError NoDevice)
# instead of failing somewhere inside the libraries. The second part is skipped on a node that
# has devices under /sys/class/infiniband. Reaching NoDevice means the libraries were opened.
# Usage: fabric_access_test.sh DRIVER
set -euo pipefail
driver=$1
needed=$(readelf -d "$driver" | awk '/NEEDED/ { print $5 }')
echo "NEEDED: $(tr '\n' ' ' <<<"$needed")"
if grep -Eq 'libib(umad|mad|netdisc)' <<<"$needed"; then
  echo "FAIL: $driver links a management library at load time"; exit 1
fi
# Without the library: libibumad.so.3 hidden in a private mount namespace (root only), the
# sweep names the package to install (AccessError NoLibrary).
# Reads every line: an awk that exits at the first match can leave ldconfig writing into a
# closed pipe (SIGPIPE), which pipefail + set -e turn into a silent failure of this test.
lib=$(ldconfig -p | awk '$1 == "libibumad.so.3" && !found { print $NF; found = 1 }')
if [ "$(id -u)" -eq 0 ] && [ -n "$lib" ] && unshare -m true 2>/dev/null; then
  rc=0
  out=$(env -u LD_PRELOAD timeout 30 unshare -m sh -c 'mount --bind /dev/null "$1" && exec "$2" sweep' sh \
        "$(realpath "$lib")" "$driver") || rc=$?
  echo "$out"
  [ "$rc" -eq 2 ] || { echo "FAIL: without libibumad: exit $rc, not 2 (AccessError)"; exit 1; }
  grep -q '^access-error NoLibrary no InfiniBand management access on this node (libibumad.so.3 not found: install libibumad3' \
    <<<"$out" || { echo "FAIL: not NoLibrary naming libibumad3"; exit 1; }
else
  echo "SKIPPED (part): hiding libibumad.so.3 needs root and unshare"
fi
if [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
  echo "SKIPPED: this node has RDMA devices; the no-device message is not tested here"; exit 0
fi
rc=0
out=$(env -u LD_PRELOAD timeout 30 "$driver" sweep) || rc=$?
echo "$out"
[ "$rc" -eq 2 ] || { echo "FAIL: exit $rc, not 2 (AccessError)"; exit 1; }
grep -q '^access-error NoDevice no InfiniBand device on this node' <<<"$out" || { echo "FAIL: not NoDevice"; exit 1; }
echo OK
