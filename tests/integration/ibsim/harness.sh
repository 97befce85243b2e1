#!/usr/bin/env bash
# A simulated InfiniBand fabric for tests: ibsim (the simulator) with a private socket, OpenSM
# as its subnet manager, and rdma-core programs run against it through libumad2sim. Source it
# from a bash test script:
#
#   . tests/integration/ibsim/harness.sh
#   sim_start TOPOLOGY [IBSIM_ARGS...]   start ibsim on an ibnetdiscover-format topology in a fresh
#                                         directory ($SIM_DIR) with its own socket name
#                                         ($IBSIM_SOCKNAME), wait until it is ready (30 s at most),
#                                         and change into $SIM_DIR: umad2sim leaves its stand-in
#                                         sysfs (sys-PID) in the working directory. Give it and
#                                         the other functions absolute paths.
#   sim_cmd 'TEXT'                       send one console command to ibsim ("PerformanceSet ...",
#                                         "Unlink ...", "ReLink ..."); waits until ibsim has read it
#   sm_start HOST [OPENSM_ARGS...]       start OpenSM attached at node HOST's port (SIM_HOST) and
#                                         wait for "SUBNET UP" (a master) or "Entering STANDBY
#                                         state" in its log (60 s at most); its log is
#                                         $SIM_DIR/sm-HOST/opensm.log. Call twice (the second with
#                                         -p PRIORITY) for a master and a standby.
#   sm_wait_log HOST PATTERN [SECONDS]   wait for a line matching PATTERN in HOST's OpenSM log
#   sim_run HOST CMD [ARGS...]           run CMD attached at HOST's port (LD_PRELOAD of umad2sim,
#                                         SIM_HOST=HOST), bounded by $SIM_RUN_TIMEOUT (60 s)
#   sim_stop                             stop every OpenSM, then ibsim (that order: OpenSM says
#                                         goodbye through the simulator), each bounded by a
#                                         timeout and SIGKILL; also run on exit
#   sim_kill                             kill ibsim alone at once (a fabric that goes away)
#   sim_skip_unless_available            exit 77 with "SKIPPED: ..." when ibsim, OpenSM or
#                                         umad2sim are not installed
# Preload umad2sim only into programs that talk to the fabric: every preloaded process attaches
# to the simulator as a client. Nothing waits on a sleep finishing in time: every wait polls for
# its condition under a deadline and fails the test with a message when the deadline passes.
UMAD2SIM=${UMAD2SIM:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}
SIM_RUN_TIMEOUT=${SIM_RUN_TIMEOUT:-60}
SIM_DIR=
SIM_PID=
SIM_TAIL_PID=
SIM_SM_PIDS=()

sim_skip_unless_available() {
  local t
  for t in ibsim opensm; do
    command -v "$t" >/dev/null || { echo "SKIPPED: $t not installed (scripts/install-deps.sh)"; exit 77; }
  done
  [ -f "$UMAD2SIM" ] || { echo "SKIPPED: $UMAD2SIM not installed (ibsim-utils)"; exit 77; }
}

_sim_wait() {  # _sim_wait SECONDS DESCRIPTION COMMAND...: poll COMMAND until it succeeds
  local secs=$1 what=$2; shift 2
  local end=$((SECONDS + secs))
  until "$@"; do
    if [ $SECONDS -ge $end ]; then echo "harness: timed out after ${secs}s waiting for $what" >&2; return 1; fi
    sleep 0.1
  done
}

sim_start() {
  local topo=$1; shift
  topo=$(realpath "$topo")
  SIM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ibsim.XXXXXX")
  cd "$SIM_DIR"
  export IBSIM_SOCKNAME="fabscope-$$-${SIM_DIR##*.}"
  mkfifo "$SIM_DIR/console"
  # ibsim reads its console from stdin: a fifo kept open by a writer of our own.
  exec {SIM_CONSOLE_FD}<>"$SIM_DIR/console"
  ibsim -s "$@" "$topo" <"$SIM_DIR/console" >"$SIM_DIR/ibsim.log" 2>&1 &
  SIM_PID=$!
  trap sim_stop EXIT
  trap 'exit 143' TERM  # a test killed by its time limit still stops OpenSM and ibsim
  trap 'exit 130' INT
  _sim_wait 30 "ibsim to start (log: $SIM_DIR/ibsim.log)" grep -q "Network simulator ready" "$SIM_DIR/ibsim.log" || {
    cat "$SIM_DIR/ibsim.log" >&2; return 1; }
}

sim_cmd() {
  local before
  before=$(grep -c "sim>" "$SIM_DIR/ibsim.log" || true)
  echo "$1" >&"$SIM_CONSOLE_FD"
  # ibsim prints a new prompt after each command it has executed.
  _sim_wait 10 "ibsim to take \"$1\"" _sim_prompts_above "$before"
}
_sim_prompts_above() { [ "$(grep -o "sim>" "$SIM_DIR/ibsim.log" | wc -l)" -gt "$1" ]; }

sm_start() {
  local host=$1; shift
  local dir="$SIM_DIR/sm-$host"
  mkdir -p "$dir"
  LD_PRELOAD=$UMAD2SIM SIM_HOST=$host OSM_CACHE_DIR=$dir OSM_TMP_DIR=$dir \
    opensm -d2 -f "$dir/opensm.log" -F /dev/null "$@" >"$dir/stdout" 2>&1 &
  SIM_SM_PIDS+=($!)
  sm_wait_log "$host" "SUBNET UP\|Entering STANDBY state" 60
}

sm_wait_log() {
  _sim_wait "${3:-60}" "\"$2\" in $SIM_DIR/sm-$1/opensm.log" grep -q "$2" "$SIM_DIR/sm-$1/opensm.log"
}

sim_run() {
  local host=$1; shift
  LD_PRELOAD=$UMAD2SIM SIM_HOST=$host timeout -k 5 "$SIM_RUN_TIMEOUT" "$@"
}

_sim_stop_pid() {  # TERM, up to 10 s, then KILL
  local pid=$1
  kill -TERM "$pid" 2>/dev/null || return 0
  _sim_wait 10 "process $pid to exit" _sim_gone "$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
}
_sim_gone() { ! kill -0 "$1" 2>/dev/null; }

sim_kill() {
  [ -n "$SIM_PID" ] && kill -KILL "$SIM_PID" 2>/dev/null
  wait "$SIM_PID" 2>/dev/null || true
  SIM_PID=
}

sim_stop() {
  local pid
  for pid in "${SIM_SM_PIDS[@]}"; do _sim_stop_pid "$pid"; done
  SIM_SM_PIDS=()
  [ -n "$SIM_PID" ] && _sim_stop_pid "$SIM_PID"
  SIM_PID=
  [ -n "${SIM_CONSOLE_FD:-}" ] && exec {SIM_CONSOLE_FD}>&- 2>/dev/null
  SIM_CONSOLE_FD=
  if [ -n "$SIM_DIR" ] && [ -z "${SIM_KEEP:-}" ]; then cd / && rm -rf "$SIM_DIR"; fi
  SIM_DIR=
}
