#!/usr/bin/env bash
# Slurm prolog / node health check: runs `fabscope check` on this node before a job starts.
#   fail  findings (exit 2): drain the node with the failing check ids as the reason, exit 1
#         (Slurm requeues the job elsewhere);
#   warn  findings (exit 1): log them to syslog, let the job run;
#   3     (fabscope itself failed): log it and let the job run (a broken tool must not drain
#         a healthy cluster).
# Install: Prolog=/etc/slurm/fabscope-prolog.sh in slurm.conf (or call it from NHC).
# Environment: FABSCOPE (binary, default: fabscope on PATH), FABSCOPE_PROLOG_DRAIN=0 (never
# drain, only log), FABSCOPE_PROLOG_TIMEOUT (seconds, default 20), FABSCOPE_ROOT (as fabscope).
set -u
fabscope=${FABSCOPE:-fabscope}
timeout_s=${FABSCOPE_PROLOG_TIMEOUT:-20}
node=${SLURMD_NODENAME:-$(hostname -s)}
log() { logger -t fabscope-prolog -- "$*" 2>/dev/null; echo "fabscope-prolog: $*" >&2; }

out=$(timeout "$timeout_s" "$fabscope" check --json 2>/dev/null)
rc=$?
if [ "$rc" -eq 124 ]; then
  log "fabscope check timed out after ${timeout_s}s on $node; job allowed"
  exit 0
fi
ids() {  # "id@subject" of findings at the given severity, from the JSON on stdin
  python3 -c '
import json, sys
doc = json.load(sys.stdin)
sev = sys.argv[1]
print(" ".join(sorted({f["id"] + "@" + f.get("subject", "") for f in doc.get("findings", [])
                       if f.get("severity") == sev})))' "$1" 2>/dev/null
}
case "$rc" in
  0) exit 0 ;;
  1) log "warnings on $node: $(printf '%s' "$out" | ids warn)"; exit 0 ;;
  2)
    failed=$(printf '%s' "$out" | ids fail)
    reason="fabscope: ${failed:-check failed}"
    reason=${reason:0:200}  # scontrol's reason is a short line
    log "failures on $node: $failed"
    if [ "${FABSCOPE_PROLOG_DRAIN:-1}" != 0 ] && command -v scontrol >/dev/null; then
      scontrol update nodename="$node" state=drain reason="$reason" ||
        log "scontrol could not drain $node"
    fi
    exit 1 ;;
  *) log "fabscope check could not run on $node (exit $rc); job allowed"; exit 0 ;;
esac
