#!/usr/bin/env bash
# fabscope cluster under the env contract (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, a token),
# four ranks on this machine over TCP, each with its own copy of the soft-RoCE VM capture:
#   1. all four join: exit 0/1 agreed by every rank, pairs ring measured;
#   2. rank 3 never starts, rank 2 has the wrong token, and a stray client sends garbage and an
#      oversized header: rank 0 names n2 (refused: wrong token) and n3 (never joined) within
#      --timeout, every rank that ran exits 2 (rank 2 itself: 3, refused), nothing crashes.
# Usage: cluster_env_test.sh FABSCOPE_BINARY
set -euo pipefail
fabscope=$1
src=$(cd "$(dirname "$0")/../fixtures/rxe-vm" && pwd)
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.out "$work"/*.err; do echo "== $f"; cat "$f"; done >&2; exit 1; }
for r in 0 1 2 3; do
  mkdir -p "$work/root$r"
  cp -a "$src/proc" "$src/sys" "$work/root$r/"
  echo "n$r" > "$work/root$r/proc/sys/kernel/hostname"
done
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start() {  # rank token args...
  local r=$1 tok=$2; shift 2
  env -u SLURM_JOB_ID RANK=$r WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port FABSCOPE_CLUSTER_TOKEN=$tok \
    FABSCOPE_ROOT="$work/root$r" FABSCOPE_CLUSTER_PAIR_ADDR=127.0.0.1 \
    "$fabscope" cluster --nodes 'n[0-3]' --timeout 8 "$@" >"$work/$r.out" 2>"$work/$r.err" &
  pids+=($!)
}

# 1. Everyone joins.
for r in 3 2 1 0; do start $r secret --pairs ring --pair-seconds 0.2 --json; done
codes=()
for p in "${pids[@]}"; do set +e; wait "$p"; codes+=($?); set -e; done
pids=()
for c in "${codes[@]}"; do [ "$c" = "${codes[0]}" ] || fail "ranks disagree on the exit code: ${codes[*]}"; done
[ "${codes[0]}" -le 1 ] || fail "healthy copies exit ${codes[0]}"
python3 - "$work/0.out" <<'PY' || fail "scenario 1 JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["launcher"] == "env" and len(d["nodes"]) == 4 and d["missing"] == [], d["missing"]
assert [n["name"] for n in d["nodes"]] == ["n0", "n1", "n2", "n3"]
pairs = d["pairwise"]["pairs"]
assert d["pairwise"]["rounds"] == 2 and len(pairs) == 4, pairs
assert all(p["a_to_b_gbps"] and p["b_to_a_gbps"] and not p["error"] for p in pairs), pairs
PY
[ ! -s "$work/1.out" ] || fail "rank 1 printed something"
echo "ok: 4 ranks joined over TCP, exit ${codes[0]} on every rank, 4 ring pairs measured"

# 2. n3 never starts, n2 has the wrong token, a stray client sends garbage.
t0=$(date +%s)
start 0 secret --pairs none --json
start 1 secret --pairs none
start 2 wrong --pairs none
python3 - "$port" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
for payload in (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"FSCL\x01\x04\x00\x00\x00\x00\x00\x01\x7f\xff\xff\xff"):
    for _ in range(50):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=1); break
        except OSError: time.sleep(0.1)
    s.sendall(payload); time.sleep(0.2); s.close()
PY
codes=()
for p in "${pids[@]}"; do set +e; wait "$p"; codes+=($?); set -e; done
pids=()
elapsed=$(( $(date +%s) - t0 ))
[ "${codes[0]}" = 2 ] && [ "${codes[1]}" = 2 ] || fail "ranks 0/1 exit ${codes[0]}/${codes[1]}, expected 2"
[ "${codes[2]}" = 3 ] || fail "the wrong-token rank exits ${codes[2]}, expected 3"
grep -q "refused rank 2: wrong token" "$work/2.err" || fail "rank 2 does not say it was refused for its token"
grep -q "not a fabscope cluster message" "$work/0.err" || fail "rank 0 did not log the garbage peer"
grep -q "more than the" "$work/0.err" || fail "rank 0 did not log the oversized message"
[ "$elapsed" -lt 30 ] || fail "took ${elapsed}s with --timeout 8"
python3 - "$work/0.out" <<'PY' || fail "scenario 2 JSON"
import json, sys
d = json.load(open(sys.argv[1]))
missing = d["missing"]
assert len(missing) == 2, missing
assert missing[0]["name"] == "n2" and "wrong token" in missing[0]["reason"], missing
assert missing[1]["name"] == "n3" and "never joined" in missing[1]["reason"], missing
f = [f for f in d["findings"] if f["id"] == "cluster.node_missing"][0]
assert f["severity"] == "fail" and "n2" in f["evidence"] and "n3" in f["evidence"], f
assert {x["node"] for x in d["drain"]} == {"n2", "n3"}, d["drain"]
PY
echo "ok: n2 (wrong token) and n3 (never started) named in ${elapsed}s; garbage and oversized peers logged"
