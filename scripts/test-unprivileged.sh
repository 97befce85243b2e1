#!/usr/bin/env bash
# Runs the CLI tests and every read-only command on this machine's live /sys and /proc as an
# unprivileged user: probe, check, doctor, env, env lint, log and one exporter scrape must work
# (exit 0-2, never 3, no crash) without root. As root it creates the system user fabscope-test
# (useradd) and drops to it with setpriv (no capabilities, no supplementary groups); directories
# on the way to the build that the user cannot search get o+x for the run and are restored after.
# Run as a normal user, it runs as that user.
# Usage: scripts/test-unprivileged.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
build=$(cd "${1:-build}" && pwd)
fabscope=$build/src/cli/fabscope
tests=$build/tests/fabscope_cli_tests
for f in "$fabscope" "$tests"; do
  [ -x "$f" ] || { echo "test-unprivileged.sh: $f not built" >&2; exit 3; }
done
user=fabscope-test
work=$(mktemp -d)
chmod 755 "$work"
opened=()
cleanup() {
  local d
  for d in "${opened[@]}"; do chmod o-x "$d"; done
  chmod -R u+rwx "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

if [ "$(id -u)" -eq 0 ]; then
  id "$user" >/dev/null 2>&1 ||
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
  as_user=(setpriv --reuid="$user" --regid="$user" --clear-groups --inh-caps=-all --)
  # The user must reach the binaries, the sources (fixtures) and the build tree.
  for target in "$repo" "$build"; do
    d=$target
    while [ "$d" != / ]; do
      if ! "${as_user[@]}" test -x "$d"; then
        chmod o+x "$d"; opened+=("$d")
      fi
      d=$(dirname "$d")
    done
  done
  [ ${#opened[@]} -eq 0 ] || echo "o+x for this run on: ${opened[*]}"
else
  as_user=()
fi
run() { env HOME="$work" FABSCOPE_ROOT= "${as_user[@]}" "$@"; }
echo "running as: $(run id)"
[ "$(run id -u)" != 0 ] || { echo "test-unprivileged.sh: still uid 0" >&2; exit 3; }

# 1. The CLI tests (every command on the real captures, help, exit codes, JSON), less the
# check variants: they rerun `check` on copies of the same trees with one value changed (most
# of the suite's time) and read nothing the other tests do not.
run "$tests" --gtest_brief=1 --gtest_filter='-CheckVariants.*'

# 2. Every read-only command on this machine, live. Exit 3 (error) or a signal fails.
failed=0
check_cmd() {
  local rc=0
  run "$fabscope" "$@" > "$work/out" 2>&1 || rc=$?
  if [ $rc -ge 3 ]; then
    echo "FAIL  fabscope $* exited $rc:"; tail -5 "$work/out" | sed 's/^/      /'; failed=1
  else
    echo "ok    fabscope $* (exit $rc)"
  fi
}
check_cmd probe
check_cmd probe --json
check_cmd check
check_cmd doctor
check_cmd env
check_cmd env lint
check_cmd log "$repo/tests/fixtures/nccl-logs/h200x2/nvlink-default.log"
check_cmd exporter --once
if [ -x "$build/src/cli/fabscope-exporter" ]; then
  rc=0; run "$build/src/cli/fabscope-exporter" --once > "$work/out" 2>&1 || rc=$?
  if [ $rc -ne 0 ]; then echo "FAIL  fabscope-exporter --once exited $rc"; failed=1; else echo "ok    fabscope-exporter --once"; fi
fi
run "$fabscope" exporter --once > "$work/metrics" 2>/dev/null || true
grep -q '^# TYPE ' "$work/metrics" || { echo "FAIL  exporter --once printed no metric family"; failed=1; }
# A value the kernel shows only to root must be said so, never judged (probe notes).
if run "$fabscope" probe --json | grep 'Permission denied' >/dev/null; then  # grep -q could SIGPIPE the probe
  echo "FAIL  probe --json reports 'Permission denied' instead of 'not readable as this user'"; failed=1
fi
# 3. nft absent and nft present, whatever this machine has installed, each under a PATH whose first
# entry this user cannot search (what a service account or `sudo -u` inherits from root). The
# present one is a stand-in that fails as nft 1.0.6 (Debian 12) does without CAP_NET_ADMIN.
locked=$work/locked absent=$work/bin-without-nft present=$work/bin-with-nft
mkdir -p "$locked" "$absent" "$present"
chmod 755 "$absent" "$present"
printf '#!/bin/sh\n{ echo "Operation not permitted (you must be root)"
  echo "netlink: Error: cache initialization failed: Operation not permitted"; } >&2\nexit 1\n' \
  > "$present/nft"
chmod 755 "$present/nft"
if [ "$(id -u)" -eq 0 ]; then chmod 700 "$locked"; else chmod 000 "$locked"; fi
run_path() { local p=$1; shift; env HOME="$work" FABSCOPE_ROOT= "${as_user[@]}" /usr/bin/env PATH="$p" "$@"; }
firewall_note() {  # PATH, expected text in probe --json
  local out rc=0
  out=$(run_path "$1" "$fabscope" probe --json 2>&1) || rc=$?
  if [ $rc -ge 3 ]; then
    echo "FAIL  probe --json with PATH=$1 exited $rc"; failed=1
  elif ! grep -qF "$2" <<<"$out" || grep -q 'Permission denied' <<<"$out"; then
    echo "FAIL  probe --json with PATH=$1: no '$2' (or 'Permission denied'):"
    grep -i 'nft\|firewall\|denied' <<<"$out" | head -5 | sed 's/^/      /'; failed=1
  else
    echo "ok    probe --json with PATH=$1: $2"
  fi
}
firewall_note "$locked:$absent" 'nft not found (nftables not installed): firewall unknown'
firewall_note "$locked:$present" 'not readable as this user (nft: Operation not permitted (you must be root))'
chmod 755 "$locked"
[ $failed -eq 0 ] || exit 1
echo "ok: CLI tests and read-only commands as $(run id -un)"
