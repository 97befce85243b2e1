#!/bin/sh
# The soft-RoCE scenario, run inside the test VM by /init (busybox sh). It only records: every
# command's stdout, stderr and exit status go under $OUT, and assert.py on the host judges them.
# Steps for fabscope commands this binary lacks are recorded as skipped, with the reason.
#
# Network: veth0 (10.9.0.1) <-> veth1 (10.9.0.2) in the init namespace, rxe0 on veth0 and rxe1
# on veth1. Linux 6.1's rdma_rxe opens its RoCE v2 UDP socket (port 4791) and routes only in
# init_net (drivers/infiniband/sw/rxe/rxe_net.c: rxe_net_ipv4_init, rxe_find_route4), so the
# two ends cannot live in separate namespaces. With both addresses local, the kernel would send
# 10.9.0.1 -> 10.9.0.2 through lo, where no rxe device listens (packets dropped). Policy rules
# send locally generated packets for the peer address out of the veth instead, and accept_local
# lets the other end accept a packet whose source is one of its own addresses.
OUT=${1:-/out}
QUICK=${QUICK:-0}
CAPTURE=${CAPTURE:-0}
mkdir -p "$OUT"
cd "$OUT" || exit 1

log() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; echo "[$(cut -d' ' -f1 /proc/uptime)] $*" >/dev/console; }
mark() { echo "$1 $(cut -d' ' -f1 /proc/uptime)" >>"$OUT/timings.txt"; }
# run DIR NAME CMD...: stdout to DIR/NAME.out, stderr to DIR/NAME.err, exit status to DIR/NAME.rc
run() {
  d=$1 n=$2; shift 2
  mkdir -p "$d"
  # A hung command (a perftest peer that never connects) must not hold the VM until the host's
  # timeout: each gets 120 s, and 124/143 in NAME.rc says it was killed.
  timeout 120 "$@" >"$d/$n.out" 2>"$d/$n.err"
  rc=$?
  echo "$rc" >"$d/$n.rc"
  echo "$d/$n rc=$rc: $*" >>"$OUT/commands.log"
  return $rc
}
skip() { echo "$1: $2" >>"$OUT/skipped.txt"; log "skip $1: $2"; }
has_cmd() { grep -q "^  $1 " "$OUT/fabscope-help.txt"; }

mark start
uname -r >kernel-release.txt
cp /etc/packages packages.txt
run . fabscope-version fabscope --version
fabscope --help >fabscope-help.txt 2>&1
for c in probe check doctor env exporter rdma; do
  if has_cmd $c; then echo "$c" >>commands.txt; else skip "$c" "not in this build's 'fabscope --help'"; fi
done

# --- network and rxe devices
log "network"
ip2 link set lo up
ip2 link add veth0 type veth peer name veth1
ip2 addr add 10.9.0.1/24 dev veth0
ip2 addr add 10.9.0.2/24 dev veth1
ip2 link set veth0 up
ip2 link set veth1 up
for k in all default veth0 veth1; do
  echo 1 >/proc/sys/net/ipv4/conf/$k/accept_local
  echo 0 >/proc/sys/net/ipv4/conf/$k/rp_filter
done
ip2 rule add pref 100 lookup local
ip2 rule del pref 0
ip2 rule add pref 10 iif lo to 10.9.0.2 lookup 100
ip2 rule add pref 11 iif lo to 10.9.0.1 lookup 101
ip2 route add 10.9.0.2 dev veth0 src 10.9.0.1 table 100
ip2 route add 10.9.0.1 dev veth1 src 10.9.0.2 table 101
ip2 neigh replace 10.9.0.2 lladdr "$(cat /sys/class/net/veth1/address)" dev veth0 nud permanent
ip2 neigh replace 10.9.0.1 lladdr "$(cat /sys/class/net/veth0/address)" dev veth1 nud permanent
run net rdma-link-add-rxe0 rdma link add rxe0 type rxe netdev veth0
run net rdma-link-add-rxe1 rdma link add rxe1 type rxe netdev veth1
ip2 rule show >net/rules.txt 2>&1
ip2 route show table all >net/routes.txt 2>&1

# wait_gid DEV: the GID table fills from netdev events on a workqueue, after the link exists
wait_gid() {
  i=0
  while [ $i -lt 50 ]; do
    grep -qs ffff:0a09 /sys/class/infiniband/$1/ports/1/gids/* && return 0
    sleep 0.1; i=$((i + 1))
  done
  log "no IPv4 GID on $1 after 5 s"; return 1
}
wait_gid rxe0; wait_gid rxe1
mark rxe-ready

# roce_v2_ipv4_gid DEV: index of the RoCE v2 GID holding an IPv4-mapped address
roce_v2_ipv4_gid() {
  for g in /sys/class/infiniband/$1/ports/1/gids/*; do
    i=${g##*/}
    case "$(cat "$g")" in 0000:0000:0000:0000:0000:ffff:*)
      [ "$(cat /sys/class/infiniband/$1/ports/1/gid_attrs/types/$i 2>/dev/null)" = "RoCE v2" ] && { echo "$i"; return; } ;;
    esac
  done
}

# wait_listen PORT: until a TCP socket listens on PORT (state 0A in /proc/net/tcp)
wait_listen() {
  hex=$(printf '%04X' "$1"); i=0
  while [ $i -lt 100 ]; do
    grep -q ":$hex 00000000:0000 0A" /proc/net/tcp && return 0
    sleep 0.1; i=$((i + 1))
  done
  return 1
}
# snapshot PHASE: what fabscope says beside what the kernel and rdma-core say
snapshot() {
  p=phases/$1
  log "snapshot $1"
  mkdir -p "$p"
  run "$p" rdma-link-json rdma -j link show
  run "$p" rdma-link rdma link show
  run "$p" ibv_devinfo ibv_devinfo -v
  for dev in rxe0 rxe1; do
    for f in state phys_state rate link_layer; do
      echo "$dev $f $(cat /sys/class/infiniband/$dev/ports/1/$f 2>&1)"
    done
  done >"$p/sysfs-ports.txt"
  for n in veth0 veth1; do
    for f in mtu operstate carrier statistics/rx_bytes statistics/tx_bytes statistics/rx_packets statistics/tx_packets; do
      echo "$n $f $(cat /sys/class/net/$n/$f 2>&1)"
    done
  done >"$p/netdevs.txt"
  for dev in rxe0 rxe1; do
    for c in /sys/class/infiniband/$dev/ports/1/hw_counters/*; do echo "$dev ${c##*/} $(cat "$c")"; done
  done >"$p/hw_counters.txt"
  has_cmd probe && run "$p" probe fabscope probe --json
  has_cmd probe && run "$p" probe-text fabscope probe
  has_cmd check && run "$p" check fabscope check --json
  has_cmd env && run "$p" env fabscope env
  has_cmd env && run "$p" env-json fabscope env --json
  has_cmd doctor && run "$p" doctor fabscope doctor
  has_cmd exporter && [ -n "$exporter_pid" ] && run "$p" metrics wget -q -O - http://127.0.0.1:9417/metrics
  mark "snapshot-$1"
}

# The exporter serves over HTTP for the whole scenario; snapshots scrape it like Prometheus would.
exporter_pid=""
if has_cmd exporter; then
  fabscope exporter --listen 127.0.0.1:9417 --checks-interval 0 >exporter.log 2>&1 &
  exporter_pid=$!
  wait_listen 9417 || { log "exporter did not listen on 9417"; skip exporter-scrape "exporter did not listen (exporter.log)"; exporter_pid=""; }
fi

snapshot mtu1500

# --- MTU raised: rxe follows its netdev (NETDEV_CHANGEMTU), 9000 -> active_mtu 4096
log "mtu 9000"
ip2 link set veth0 mtu 9000
ip2 link set veth1 mtu 9000
sleep 0.2
snapshot mtu9000

# --- traffic: perftest between rxe1 (client) and rxe0 (server). The out-of-band TCP exchange
# goes over 127.0.0.1; the RDMA traffic uses the RoCE v2 IPv4 GIDs, so it crosses the veth.
gid0=$(roce_v2_ipv4_gid rxe0); gid1=$(roce_v2_ipv4_gid rxe1)
echo "rxe0 $gid0" >gid-index.txt; echo "rxe1 $gid1" >>gid-index.txt
# perf NAME PORT ARGS...: server on rxe0 in the background, client on rxe1
perf() {
  name=$1 port=$2; shift 2
  log "perftest $name $*"
  timeout 120 "$name" -d rxe0 -x "$gid0" -p "$port" -F "$@" >traffic/$name.server.out 2>&1 &
  spid=$!
  if wait_listen "$port"; then
    run traffic "$name.client" "$name" -d rxe1 -x "$gid1" -p "$port" -F "$@" 127.0.0.1
  else
    echo "server did not listen on $port" >traffic/$name.client.err; echo 99 >traffic/$name.client.rc
    kill $spid 2>/dev/null
  fi
  wait $spid; echo $? >traffic/$name.server.rc
}
mkdir -p traffic
if [ -n "$gid0" ] && [ -n "$gid1" ]; then
  if [ "$QUICK" = 1 ]; then bw_s=1; lat_n=200; else bw_s=3; lat_n=1000; fi
  perf ib_write_bw 18515 -D "$bw_s" -s 65536
  perf ib_read_lat 18516 -n "$lat_n" -s 8
  if [ "$QUICK" != 1 ]; then perf ib_write_lat 18517 -n "$lat_n" -s 8; perf ib_read_bw 18518 -D "$bw_s" -s 65536; fi
else
  skip traffic "no RoCE v2 IPv4 GID on rxe0 ('$gid0') or rxe1 ('$gid1')"
fi
mark traffic-done

# --- fabscope rdma beside perftest, rxe1 (client) -> rxe0 (server), alternating runs. The
# client names the server by its veth0 address: fabscope picks rxe1 from the route to it (policy
# rules above: out of veth1) and RDMA CM binds there. perftest's rows above are its first runs;
# the alternating pairs below are the comparison.
# fr NAME PORT ARGS...: fabscope server in the background, client on 10.9.0.1 with ARGS; the
# veth1 byte counter and rxe hw_counters before and after the client, in NAME.counters
fr() {
  name=$1 port=$2; shift 2
  log "fabscope rdma $name $*"
  timeout 120 fabscope rdma --server --port "$port" --json >rdma/$name.server.out 2>rdma/$name.server.err &
  spid=$!
  {
    echo "before veth1_tx $(cat /sys/class/net/veth1/statistics/tx_bytes)"
    echo "before rxe1_sent $(cat /sys/class/infiniband/rxe1/ports/1/hw_counters/sent_pkts)"
    echo "before rxe0_rcvd $(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts)"
  } >rdma/$name.counters
  if wait_listen "$port"; then
    t0=$(cut -d' ' -f1 /proc/uptime)
    run rdma "$name.client" fabscope rdma 10.9.0.1 --port "$port" --json "$@"
    echo "client_s $(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN{print b-a}')" >>rdma/$name.counters
  else
    echo "fabscope rdma server did not listen on $port" >rdma/$name.client.err; echo 99 >rdma/$name.client.rc
  fi
  {
    echo "after veth1_tx $(cat /sys/class/net/veth1/statistics/tx_bytes)"
    echo "after rxe1_sent $(cat /sys/class/infiniband/rxe1/ports/1/hw_counters/sent_pkts)"
    echo "after rxe0_rcvd $(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts)"
  } >>rdma/$name.counters
  wait $spid; echo $? >rdma/$name.server.rc
}
mkdir -p rdma
if has_cmd rdma && [ -n "$gid0" ] && [ -n "$gid1" ]; then
  if [ "$QUICK" = 1 ]; then rounds=1; else rounds=5; fi
  # (perf, fr, run and wait_listen set globals: name, port, i; the loop keeps its own)
  round=1; rport=18600
  while [ $round -le $rounds ]; do
    # perftest's -D/-n and sizes, fabscope's the same: 64 KiB WRITE bandwidth, 8 B WRITE latency
    perf ib_write_bw $rport -D "$bw_s" -s 65536
    cp traffic/ib_write_bw.client.out rdma/pt_bw.$round.out; cp traffic/ib_write_bw.client.rc rdma/pt_bw.$round.rc
    fr fab_bw.$round $((rport + 1)) -D "$bw_s" -s 64K
    perf ib_write_lat $((rport + 2)) -n "$lat_n" -s 8
    cp traffic/ib_write_lat.client.out rdma/pt_lat.$round.out; cp traffic/ib_write_lat.client.rc rdma/pt_lat.$round.rc
    fr fab_lat.$round $((rport + 3)) --test lat -s 8 -n "$lat_n"
    round=$((round + 1)); rport=$((rport + 10))
  done
  mark rdma-alternating
  # SEND: the server counts what it received on its own; --oob tcp: perftest's QP exchange
  fr fab_send 18700 --op send -D 1 -s 64K --oob tcp
  if [ "$QUICK" != 1 ]; then
    fr fab_read 18701 --op read -s 4K -s 64K -n 100 -q 2
    fr fab_bidir 18702 -b -D 1 -s 64K -q 2
  fi
  # failure paths: a link-local GID (-x 0) cannot reach an IPv4 peer; nothing listens; memlock
  fr fab_wrong_gid 18710 -x 0 --oob tcp --timeout 5 -n 100
  run rdma fab_no_server fabscope rdma 10.9.0.1 --port 18719 --json --timeout 5
  grep -q '^nobody:' /etc/passwd 2>/dev/null || echo 'nobody:x:65534:65534:nobody:/tmp:/bin/sh' >>/etc/passwd
  grep -q '^nogroup:' /etc/group 2>/dev/null || echo 'nogroup:x:65534:' >>/etc/group
  log "fabscope rdma memlock"
  timeout 60 fabscope rdma --server --port 18720 --json >rdma/fab_memlock.server.out 2>rdma/fab_memlock.server.err &
  spid=$!
  wait_listen 18720 && run rdma fab_memlock.client su -s /bin/sh nobody -c \
    'ulimit -l 64 && exec fabscope rdma 10.9.0.1 --port 18720 --json -s 1M -n 10'
  wait $spid; echo $? >rdma/fab_memlock.server.rc
  mark rdma-failures
else
  skip rdma "fabscope rdma not in this build, or no RoCE v2 IPv4 GID"
fi
snapshot after-traffic

# --- fixture capture of the healthy, post-traffic state
if [ "$CAPTURE" = 1 ]; then
  log "capture"
  sh /usr/bin/capture.sh "$OUT/capture" >capture.log 2>&1 || skip capture "capture.sh failed (see capture.log)"
  mark capture-done
fi

# --- the verbs provider goes missing (a node without ibverbs-providers): sysfs still lists the
# devices, libibverbs no longer does
log "no verbs provider"
mv /etc/libibverbs.d/rxe.driver /tmp/rxe.driver
mkdir -p phases/no-provider
has_cmd probe && run phases/no-provider probe fabscope probe --json
has_cmd check && run phases/no-provider check fabscope check --json
run phases/no-provider ibv_devices ibv_devices
mv /tmp/rxe.driver /etc/libibverbs.d/rxe.driver
mark no-provider

# --- node fabric checks (bond, firewall): each fault made, judged, undone, judged again.
# fabric_snapshot PHASE: check --json, probe --json and the exporter's check status, one shot each
fabric_snapshot() {
  p=phases/$1
  log "snapshot $1"
  mkdir -p "$p"
  cat /proc/net/bonding/bond0 >"$p/proc-net-bonding-bond0.txt" 2>&1
  nft -j list ruleset >"$p/nft-ruleset.json" 2>"$p/nft-ruleset.err"
  has_cmd probe && run "$p" probe fabscope probe --json
  has_cmd check && run "$p" check fabscope check --json
  # --once with a checks interval runs the probe and every check once before printing.
  has_cmd exporter && run "$p" metrics fabscope exporter --once --checks-interval 3600
  mark "snapshot-$1"
}
fabric_phases() {
  log "fabric: bond of two veths"
  # bond0 (active-backup, MII monitor every 100 ms) over vb0a and vb1a; their peers vb0b/vb1b
  # carry the link, so setting a peer down takes the slave's carrier (MII status) down.
  # Loading bonding creates bond0 itself (max_bonds=1); make it where it does not exist.
  ip2 link show bond0 >/dev/null 2>&1 || ip2 link add bond0 type bond ||
    { skip fabric "cannot create bond0"; return; }
  ip2 link set bond0 down
  ip2 link set bond0 type bond mode active-backup miimon 100 || { skip fabric "cannot set bond0's mode"; return; }
  ip2 link add vb0a type veth peer name vb0b
  ip2 link add vb1a type veth peer name vb1b
  ip2 link set vb0a master bond0
  ip2 link set vb1a master bond0
  for i in vb0b vb1b vb0a vb1a bond0; do ip2 link set "$i" up; done
  sleep 0.5
  fabric_snapshot bond-up
  ip2 link set vb1b down
  sleep 0.5
  fabric_snapshot bond-slave-down
  ip2 link set vb1b up
  sleep 0.5
  fabric_snapshot bond-restored
  # A slave that flaps while check --interval watches: its link failure count grows. It flaps
  # every second until the check is done, so some flaps fall between the two probes however
  # long each probe takes under emulation.
  if has_cmd check; then
    mkdir -p phases/bond-flap
    fabscope check --interval 4 --json >phases/bond-flap/check.out 2>phases/bond-flap/check.err &
    cpid=$!
    while kill -0 $cpid 2>/dev/null; do
      ip2 link set vb1b down; sleep 0.4; ip2 link set vb1b up; sleep 0.6
    done
    wait $cpid; echo $? >phases/bond-flap/check.rc
    cat /proc/net/bonding/bond0 >phases/bond-flap/proc-net-bonding-bond0.txt
  fi
  log "fabric: nft rule dropping RoCE v2"
  nft add table inet fabscope_test &&
    nft add chain inet fabscope_test input '{ type filter hook input priority 0; policy accept; }' &&
    nft add rule inet fabscope_test input udp dport 4791 counter drop ||
    { skip fabric-nft "nft could not add the test table"; return; }
  fabric_snapshot nft-drop
  nft delete table inet fabscope_test
  fabric_snapshot nft-cleared
  ip2 link del bond0; ip2 link del vb0a; ip2 link del vb1a
  mark fabric-done
}
fabric_phases

# --- a link goes down: veth1 down takes rxe1's port down (and veth0 loses carrier)
log "link down"
# fabscope rdma is mid-run when veth1 goes down: it must end with an error within its timeout
rdma_down=""
if has_cmd rdma && [ -n "$gid0" ]; then
  timeout 120 fabscope rdma --server --port 18730 --json >rdma/fab_down.server.out 2>rdma/fab_down.server.err &
  rdma_down=$!
  if wait_listen 18730; then
    t0down=$(cut -d' ' -f1 /proc/uptime)
    ( t0=$(cut -d' ' -f1 /proc/uptime)
      run rdma fab_down.client fabscope rdma 10.9.0.1 --port 18730 --json -D 60 --timeout 5
      echo "client_s $(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN{print b-a}')" >rdma/fab_down.counters ) &
    cpid=$!
    # down only once the data moves (the client's probe takes seconds under emulation)
    base=$(cat /sys/class/infiniband/rxe1/ports/1/hw_counters/sent_pkts); n=0
    while [ $n -lt 300 ] && [ $(($(cat /sys/class/infiniband/rxe1/ports/1/hw_counters/sent_pkts) - base)) -lt 2000 ]; do
      sleep 0.1; n=$((n + 1))
    done
    echo "down_after_s $(awk -v a="$t0down" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN{print b-a}')" >rdma/fab_down.when
  fi
fi
ip2 link set veth1 down
if [ -n "$rdma_down" ]; then
  [ -n "$cpid" ] && wait "$cpid"
  wait "$rdma_down"; echo $? >rdma/fab_down.server.rc
fi
sleep 0.3
snapshot link-down
[ -n "$exporter_pid" ] && kill "$exporter_pid" && wait "$exporter_pid"; echo "$?" >exporter.rc
mark end
log "scenario done"
