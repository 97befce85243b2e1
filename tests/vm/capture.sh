#!/bin/sh
# Captures the VM's sysfs/procfs into a fixture tree (busybox sh; the VM has no python).
# Same layout as tests/fixtures/tools/capture-node.py: sys/class/{net,infiniband} as the
# kernel's symlinks, the sys/devices directories they resolve to (infiniband ones recursively:
# ports, gids, gid_attrs, hw_counters) with their ancestors, and the proc files the probe reads.
# Unreadable attributes (write-only, permission) are left out; the host drops empty files.
OUT=${1:?usage: capture.sh OUTDIR}
mkdir -p "$OUT"

# copy_link PATH: the symlink itself, target as the kernel wrote it
copy_link() {
  local d
  d="$OUT$1"
  mkdir -p "${d%/*}"
  [ -L "$d" ] || ln -s "$(readlink "$1")" "$d"
}
# copy_file PATH: at most 64 KiB of a readable attribute
copy_file() {
  local d
  case "${1##*/}" in remove|rescan|reset|new_id|remove_id|bind|unbind|uevent) return ;; esac
  d="$OUT$1"
  mkdir -p "${d%/*}"
  head -c 65536 "$1" >"$d.tmp" 2>/dev/null && mv "$d.tmp" "$d" || rm -f "$d.tmp"
}
# copy_dir PATH RECURSE DEPTH: files, links recorded (not followed), subdirs when RECURSE=1
copy_dir() {
  local p
  mkdir -p "$OUT$1"
  for p in "$1"/*; do
    [ -e "$p" ] || [ -L "$p" ] || continue
    if [ -L "$p" ]; then copy_link "$p"
    elif [ -d "$p" ]; then [ "$2" = 1 ] && [ "$3" -lt 6 ] && copy_dir "$p" 1 $(($3 + 1))
    elif [ -f "$p" ]; then copy_file "$p"
    fi
  done
}
# copy_chain DIR: DIR's attributes and every ancestor's, up to sys/devices
copy_chain() {
  local p=$1
  while [ "${p#/sys/devices/}" != "$p" ]; do
    [ -d "$OUT$p" ] || copy_dir "$p" 0 0
    p=${p%/*}
  done
}
capture_class() {
  local e real
  mkdir -p "$OUT/sys/class/$1"
  for e in /sys/class/$1/*; do
    [ -L "$e" ] || continue
    copy_link "$e"
    real=$(readlink -f "$e")
    copy_dir "$real" "$2" 0
    copy_chain "${real%/*}"
    [ -e "$real/device" ] && copy_chain "$(readlink -f "$real/device")"
  done
}
capture_class net 0
# net devices' queues and statistics are subdirectories; statistics is what counters need
for n in /sys/class/net/*; do
  real=$(readlink -f "$n")
  [ -d "$real/statistics" ] && copy_dir "$real/statistics" 0 0
done
# An rxe port lists 1024 GID slots, each with gid_attrs: one cp for the whole device instead of
# a process per file (busybox under emulation forks slowly). Unreadable slots come out empty
# and are dropped on the host (assert.py capture).
mkdir -p "$OUT/sys/class/infiniband"
for e in /sys/class/infiniband/*; do
  [ -L "$e" ] || continue
  copy_link "$e"
  real=$(readlink -f "$e")
  mkdir -p "$OUT${real%/*}"
  cp -rP "$real" "$OUT${real%/*}/" 2>/dev/null
  copy_chain "${real%/*}"
done
for f in modules cmdline self/limits sys/kernel/osrelease sys/kernel/hostname \
    sys/kernel/numa_balancing sys/vm/zone_reclaim_mode sys/net/ipv4/tcp_rmem sys/net/ipv4/tcp_wmem \
    sys/net/ipv4/tcp_congestion_control sys/net/ipv4/tcp_mtu_probing \
    sys/net/ipv4/conf/all/rp_filter sys/net/ipv4/conf/all/arp_ignore \
    sys/net/ipv4/conf/all/arp_announce sys/net/ipv4/conf/default/rp_filter cpuinfo meminfo version; do
  copy_file "/proc/$f"
done
for f in /proc/sys/net/core/*; do [ -f "$f" ] && copy_file "$f"; done
for m in ib_core rdma_rxe ib_uverbs; do [ -f /sys/module/$m/version ] && copy_file /sys/module/$m/version; done
echo "captured into $OUT"
