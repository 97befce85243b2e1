#!/usr/bin/env bash
# The exporter's deployment assets run it without privilege:
#  - deploy/systemd/fabscope-exporter.service passes `systemd-analyze verify` (with ExecStart
#    pointed at the built binary) and `systemd-analyze security --offline` stays at or below
#    MAX_EXPOSURE (systemd's 0-10 scale; 1.x is "OK"), with DynamicUser, no capabilities and a
#    read-only file system among its settings;
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

for key in DynamicUser=yes NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes \
           CapabilityBoundingSet= PrivateTmp=yes DevicePolicy=closed; do
  grep -qx "$key" "$unit" || fail "$unit: no '$key' line"
done
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
sed "s|^ExecStart=[^ ]*|ExecStart=$fabscope|" "$unit" > "$work/fabscope-exporter.service"
# --man=no: the Documentation= page is installed by the package, not on a build machine.
systemd-analyze verify --man=no "$work/fabscope-exporter.service" 2>&1 | tee "$work/verify.log"
# verify exits 0 on some warnings; any output about this unit is a problem.
if grep -q "fabscope-exporter.service" "$work/verify.log"; then fail "systemd-analyze verify complained"; fi
systemd-analyze security --offline=true "$work/fabscope-exporter.service" > "$work/security.log" 2>&1 || true
exposure=$(sed -n 's/.*Overall exposure level for fabscope-exporter.service: \([0-9.]*\).*/\1/p' "$work/security.log")
[ -n "$exposure" ] || { cat "$work/security.log"; fail "no exposure level from systemd-analyze security"; }
echo "systemd-analyze security: exposure $exposure (at most $max)"
awk -v e="$exposure" -v m="$max" 'BEGIN { exit !(e <= m) }' || { grep '✗' "$work/security.log"; fail "exposure $exposure > $max"; }
echo "ok: unit verified, exposure $exposure"
