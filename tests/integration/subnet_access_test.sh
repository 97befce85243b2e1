#!/usr/bin/env bash
# The subnet collector's access: the program that links it (the driver links all of
# fabscope_subnet) carries no NEEDED entry for rdma-core's management libraries, which it opens
# with dlopen; and on a node without any RDMA device the sweep says so (AccessError NoDevice)
# instead of failing somewhere inside the libraries. The second part is skipped on a node that
# has devices under /sys/class/infiniband. Reaching NoDevice means the libraries were opened.
# Usage: subnet_access_test.sh DRIVER
set -euo pipefail
driver=$1
needed=$(readelf -d "$driver" | awk '/NEEDED/ { print $5 }')
echo "NEEDED: $(tr '\n' ' ' <<<"$needed")"
if grep -Eq 'libib(umad|mad|netdisc)' <<<"$needed"; then
  echo "FAIL: $driver links a management library at load time"; exit 1
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
