#!/usr/bin/env bash
# The exporter's deployment assets run it without privilege:
#  - deploy/systemd/fabscope-exporter.service passes `systemd-analyze verify` (with ExecStart
#    pointed at the built binary) and `systemd-analyze security --offline` stays at or below
#    MAX_EXPOSURE (systemd's 0-10 scale; 1.x is "OK"), with DynamicUser, no capabilities and a
#    read-only file system among its settings;
#  - deploy/systemd/fabscope-fabric-exporter.service (the one-per-subnet exporter) the same, but
#    as root without capabilities (the umad devices are root's) and with only the InfiniBand
#    devices allowed;
#  - deploy/kubernetes/fabscope-exporter.yaml runs non-root with a read-only root file system,
#    no privilege escalation and every capability dropped.
# Usage: deploy_hardening_test.sh FABSCOPE [MAX_EXPOSURE]   (exit 77: systemd-analyze missing)
set -euo pipefail
fabscope=$(realpath "$1") max=${2:-2.0}
repo=$(cd "$(dirname "$0")/../.." && pwd)
unit=$repo/deploy/systemd/fabscope-exporter.service
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

fabric_unit=$repo/deploy/systemd/fabscope-fabric-exporter.service
for u in "$unit" "$fabric_unit"; do
  for key in NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes CapabilityBoundingSet= AmbientCapabilities= \
             PrivateTmp=yes DevicePolicy=closed; do
    grep -qx "$key" "$u" || fail "$u: no '$key' line"
  done
done
grep -qx DynamicUser=yes "$unit" || fail "$unit: no 'DynamicUser=yes' line"
# The fabric exporter may open the InfiniBand devices and no other.
others=$(grep '^DeviceAllow=' "$fabric_unit" | grep -v -e '=char-infiniband_mad ' -e '=char-infiniband_verbs ' || true)
[ -z "$others" ] || fail "$fabric_unit allows other devices: $others"
python3 - "$repo/deploy/kubernetes/fabscope-exporter.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
ds = [d for d in docs if d.get("kind") == "DaemonSet"]
assert len(ds) == 1, "one DaemonSet expected"
pod = ds[0]["spec"]["template"]["spec"]
psc = pod.get("securityContext", {})
assert psc.get("runAsNonRoot") is True, "pod securityContext.runAsNonRoot is not true"
assert psc.get("runAsUser", 0) != 0, "pod runs as uid 0"
for c in pod["containers"]:
    sc = c.get("securityContext", {})
    name = c["name"]
    assert sc.get("readOnlyRootFilesystem") is True, f"{name}: root file system is writable"
    assert sc.get("allowPrivilegeEscalation") is False, f"{name}: privilege escalation allowed"
    assert sc.get("privileged", False) is False, f"{name}: privileged"
    assert sc.get("capabilities", {}).get("drop") == ["ALL"], f"{name}: capabilities not all dropped"
    assert sc.get("runAsUser", psc.get("runAsUser")) != 0, f"{name}: runs as uid 0"
    for m in c.get("volumeMounts", []):
        assert m.get("readOnly") is True, f"{name}: {m['mountPath']} mounted writable"
print("ok: DaemonSet non-root, read-only root file system, no capabilities, read-only host mounts")
PY

if ! command -v systemd-analyze >/dev/null; then
  echo "SKIPPED: systemd-analyze not installed (apt-get install systemd)"; exit 77
fi
# verify checks that ExecStart exists and is executable: point it at the binary under test.
check_unit() {  # check_unit UNIT_FILE
  local name
  name=$(basename "$1")
  sed "s|^ExecStart=[^ ]*|ExecStart=$fabscope|" "$1" > "$work/$name"
  # --man=no: the Documentation= page is installed by the package, not on a build machine.
  systemd-analyze verify --man=no "$work/$name" 2>&1 | tee "$work/verify.log"
  # verify exits 0 on some warnings; any output about this unit is a problem.
  if grep -q "$name" "$work/verify.log"; then fail "systemd-analyze verify complained about $name"; fi
  systemd-analyze security --offline=true "$work/$name" > "$work/security.log" 2>&1 || true
  exposure=$(sed -n "s/.*Overall exposure level for $name: \([0-9.]*\).*/\1/p" "$work/security.log")
  [ -n "$exposure" ] || { cat "$work/security.log"; fail "no exposure level from systemd-analyze security"; }
  echo "systemd-analyze security $name: exposure $exposure (at most $max)"
  awk -v e="$exposure" -v m="$max" 'BEGIN { exit !(e <= m) }' || { grep '✗' "$work/security.log"; fail "$name: exposure $exposure > $max"; }
  echo "ok: $name verified, exposure $exposure"
}
check_unit "$unit"
check_unit "$fabric_unit"
