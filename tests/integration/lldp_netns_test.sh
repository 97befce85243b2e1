#!/usr/bin/env bash
# LLDP neighbours from a real lldpd. Two network namespaces joined by a veth pair: a "switch"
# (port swp1, MTU 9216) and a "host" (eth9, MTU 9000), one lldpd in each with its own control
# socket. `fabscope probe --json` in the host namespace, pointed at the host's lldpd with
# FABSCOPE_LLDPCLI_SOCKET, reports the switch's name and port; then the switch port advertises a
# maximum frame size below the host's MTU and `fabscope check` reports lldp.mtu_above_switch_mfs.
#
# lldpd sends no IEEE 802.3 Maximum Frame Size TLV of its own (Linux gives it no frame size to
# read), so the switch side sends the TLV as a custom one (OUI 00-12-0F, subtype 4), the bytes a
# switch sends; the host's lldpd decodes it as it decodes a switch's.
# Waits poll lldpcli, bounded by a number of tries; nothing depends on how long a step takes.
# Usage: lldp_netns_test.sh FABSCOPE
set -euo pipefail
fabscope=$(realpath "$1")
skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, lldpd)"
for t in ip lldpd lldpcli python3; do
  command -v "$t" >/dev/null || skip "$t not installed (scripts/install-deps.sh installs lldpd, iproute2)"
done

sw=fabscope-lldp-sw-$$
host=fabscope-lldp-host-$$
dir=$(mktemp -d)
# lldpcli runs setuid _lldpd (Debian, Ubuntu): the sockets' directory must be searchable by it.
chmod 755 "$dir"
pids=()
made_run_dir=0
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  ip netns del "$sw" 2>/dev/null || true
  ip netns del "$host" 2>/dev/null || true
  [ "$made_run_dir" -eq 0 ] || rmdir /run/lldpd 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

ip netns add "$sw" 2>/dev/null || skip "cannot create network namespaces here"
ip netns add "$host"
ip link add swp1 netns "$sw" type veth peer name eth9 netns "$host" || skip "cannot create a veth pair here"
ip -n "$sw" link set lo up
ip -n "$host" link set lo up
ip -n "$sw" link set swp1 mtu 9216 up
ip -n "$host" link set eth9 mtu 9000 up
# lldpd's privilege-separated half chroots into /run/lldpd, which its service unit creates.
if [ ! -d /run/lldpd ]; then mkdir -p /run/lldpd; made_run_dir=1; fi

cat >"$dir/sw.conf" <<'EOF'
configure lldp tx-interval 1
configure system hostname tor-a.pod1
configure lldp portidsubtype ifname
configure ports swp1 lldp portdescription "host:eth9"
configure ports swp1 lldp custom-tlv oui 00,12,0f subtype 4 oui-info 24,00
EOF
cat >"$dir/host.conf" <<'EOF'
configure lldp tx-interval 1
configure system hostname host-under-test
EOF
ip netns exec "$sw" lldpd -d -u "$dir/sw.sock" -I swp1 -O "$dir/sw.conf" -m 192.0.2.1 >"$dir/sw.log" 2>&1 &
pids+=($!)
ip netns exec "$host" lldpd -d -u "$dir/host.sock" -I eth9 -O "$dir/host.conf" >"$dir/host.log" 2>&1 &
pids+=($!)

# wait_for_mfs N: until the host's lldpd lists the switch port with maximum frame size N.
wait_for_mfs() {
  local out
  for _ in $(seq 1 120); do
    out=$(ip netns exec "$host" lldpcli -u "$dir/host.sock" -f json show neighbors details 2>/dev/null || true)
    if grep -q "\"mfs\": \"$1\"" <<<"$out" && grep -q '"tor-a.pod1"' <<<"$out"; then return 0; fi
    sleep 0.5
  done
  echo "FAIL: the host's lldpd never listed tor-a.pod1 with mfs $1; last answer:"
  echo "$out"
  echo "--- switch lldpd:"; cat "$dir/sw.log"; echo "--- host lldpd:"; cat "$dir/host.log"
  exit 1
}

in_host() { FABSCOPE_LLDPCLI_SOCKET="$dir/host.sock" FABSCOPE_ROOT= ip netns exec "$host" "$@"; }

wait_for_mfs 9216
in_host "$fabscope" probe --json >"$dir/probe.json"
python3 - "$dir/probe.json" <<'EOF'
import json, sys
node = json.load(open(sys.argv[1]))
assert node["lldp"]["source"] == "lldpcli", node["lldp"]
eth9 = [n for n in node["netdevs"] if n["name"] == "eth9"]
assert eth9, "eth9 not among the netdevs"
nbs = eth9[0]["lldp_neighbors"]
assert len(nbs) == 1, nbs
nb = nbs[0]
want = {"protocol": "LLDP", "chassis_name": "tor-a.pod1", "port_id": "swp1", "port_id_type": "ifname",
        "port_descr": "host:eth9", "mfs_bytes": 9216, "mgmt_addresses": ["192.0.2.1"]}
for k, v in want.items():
    assert nb[k] == v, f"{k}: {nb[k]!r}, expected {v!r}"
assert nb["chassis_id"], nb
print("probe: eth9 ->", nb["chassis_name"], nb["port_id"], "mfs", nb["mfs_bytes"])
EOF
in_host "$fabscope" probe >"$dir/probe.txt"
grep -Eq '^ *eth9 +9000 +tor-a\.pod1 +swp1 \(host:eth9\) +9216 ' "$dir/probe.txt" ||
  { echo "FAIL: the human output has no LLDP row for eth9:"; cat "$dir/probe.txt"; exit 1; }

# MFS 9216 takes 9000-byte frames (9018 with header and FCS): no finding.
in_host "$fabscope" check --json >"$dir/check-ok.json" || true
python3 - "$dir/check-ok.json" <<'EOF'
import json, sys
ids = [f["id"] for f in json.load(open(sys.argv[1]))["findings"]]
assert "lldp.mtu_above_switch_mfs" not in ids, ids
EOF

# The switch port now takes standard frames only (1518 = 1500 + 18).
ip netns exec "$sw" lldpcli -u "$dir/sw.sock" configure ports swp1 lldp custom-tlv replace oui 00,12,0f subtype 4 oui-info 05,ee >/dev/null
wait_for_mfs 1518
rc=0
in_host "$fabscope" check --json >"$dir/check-bad.json" || rc=$?
[ "$rc" -ge 1 ] || { echo "FAIL: fabscope check exited $rc with an MTU above the switch's frame size"; exit 1; }
python3 - "$dir/check-bad.json" <<'EOF'
import json, sys
fs = [f for f in json.load(open(sys.argv[1]))["findings"] if f["id"] == "lldp.mtu_above_switch_mfs"]
assert len(fs) == 1, fs
f = fs[0]
assert f["subject"] == "eth9" and f["severity"] == "warn", f  # a veth carries no RDMA port: warn
assert f["evidence"] == "netdev=eth9 mtu=9000 frame=9018 switch=tor-a.pod1 port=swp1 mfs=1518", f["evidence"]
print("check:", f["severity"], f["message"])
EOF
in_host "$fabscope" doctor >"$dir/doctor.txt" 2>&1 || true
grep -q 'lldp.mtu_above_switch_mfs' "$dir/doctor.txt" ||
  { echo "FAIL: doctor does not report lldp.mtu_above_switch_mfs:"; cat "$dir/doctor.txt"; exit 1; }

# An lldpd that does not answer is "unknown", never an error.
FABSCOPE_LLDPCLI_SOCKET="$dir/none.sock" FABSCOPE_ROOT= ip netns exec "$host" "$fabscope" probe --json >"$dir/probe-none.json"
python3 - "$dir/probe-none.json" <<'EOF'
import json, sys
node = json.load(open(sys.argv[1]))
assert node["lldp"]["source"] == "", node["lldp"]
assert node["lldp"]["note"].startswith("lldpd not running"), node["lldp"]
assert all(not n["lldp_neighbors"] for n in node["netdevs"])
EOF
echo OK
