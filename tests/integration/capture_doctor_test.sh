#!/bin/sh
# fabscope capture, unpacked with tar, judged by doctor --root: the same findings as doctor on
# what was captured. Every fixture root (with and without --redact) and this machine itself.
# Usage: capture_doctor_test.sh FABSCOPE FIXTURES_DIR
set -eu
fabscope=$1
fixtures=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset FABSCOPE_ROOT || true

# doctor --json on $2 (a root, or "" for this node) into $1; its exit code into $1.rc.
doctor() {
  rc=0
  if [ -n "$2" ]; then "$fabscope" doctor --json --root "$2" > "$1" || rc=$?
  else "$fabscope" doctor --json > "$1" || rc=$?; fi
  echo "$rc" > "$1.rc"
  [ "$rc" -le 2 ] || { echo "doctor failed (exit $rc) on '${2:-this node}'"; exit 1; }
}

# Same findings (id, severity, subject, evidence); redacted: identities in them made alike.
same_findings() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, re, sys
a, b, redacted = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3] == "1"
ident = re.compile(r"\b[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4}){3,19}\b|\b\d{1,3}(?:\.\d{1,3}){3}\b|"
                   r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
def norm(v):
    return ident.sub("ID", v) if redacted and isinstance(v, str) else v
def key(f):
    return tuple(norm(f.get(k)) for k in ("id", "severity", "subject", "evidence"))
fa, fb = sorted(map(key, a["findings"])), sorted(map(key, b["findings"]))
if fa != fb:
    print("findings differ:\n  reference:", *fa, sep="\n    ")
    print("  capture:", *fb, sep="\n    ")
    sys.exit(1)
if a.get("verdict") != b.get("verdict"):
    sys.exit("verdict %s != %s" % (a.get("verdict"), b.get("verdict")))
print("same %d findings, verdict %s" % (len(fa), a.get("verdict")))
PY
}

# capture ROOT NAME [--redact]: capture ROOT ("" = this node), unpack, compare doctor.
check() {
  root=$1 name=$2
  shift 2
  out="$work/$name.tar.gz"
  if [ -n "$root" ]; then "$fabscope" capture --root "$root" -o "$out" "$@" > "$work/$name.txt"
  else "$fabscope" capture -o "$out" "$@" > "$work/$name.txt"; fi
  mkdir -p "$work/x-$name"
  tar -xzf "$out" -C "$work/x-$name"
  [ -f "$work/x-$name/$name/fabscope/manifest.json" ] || { echo "$name: no manifest in the archive"; exit 1; }
  doctor "$work/$name.ref.json" "$root"
  doctor "$work/$name.cap.json" "$work/x-$name/$name"
  cmp -s "$work/$name.ref.json.rc" "$work/$name.cap.json.rc" ||
    { echo "$name: doctor exit $(cat "$work/$name.ref.json.rc") vs $(cat "$work/$name.cap.json.rc")"; exit 1; }
  redacted=0
  for a in "$@"; do [ "$a" = --redact ] && redacted=1; done
  printf '%s: ' "$name"
  same_findings "$work/$name.ref.json" "$work/$name.cap.json" "$redacted"
}

for fx in h200x2-node rxe-vm virtio-2cpu-node; do
  check "$fixtures/$fx" "$fx"
  check "$fixtures/$fx" "$fx-redacted" --redact
done
python3 "$here/../support/ttar.py" "$fixtures/procfs-infiniband/sys-class-infiniband-and-net.ttar" "$work/ib"
check "$work/ib" ib
check "$work/ib" ib-redacted --redact

# Redaction leaves no MAC, GUID or host name of the original behind.
python3 - "$fixtures/h200x2-node" "$work/x-h200x2-node-redacted/h200x2-node-redacted" <<'PY'
import glob, os, sys
src, dst = sys.argv[1:]
macs = set()
for pattern in ("sys/class/net/*/address", "sys/class/infiniband/*/node_guid",
                "sys/class/infiniband/*/sys_image_guid"):
    for f in glob.glob(os.path.join(src, pattern)):
        try: macs.add(open(f).read().strip())
        except OSError: pass
macs = {m for m in macs if m and set(m) - set("0:")}
left = []
for dirpath, _, files in os.walk(dst):
    for f in files:
        if os.path.islink(os.path.join(dirpath, f)):
            continue
        text = open(os.path.join(dirpath, f), "rb").read().decode("utf-8", "replace")
        left += [(m, f) for m in macs if m in text]
if not macs or left:
    sys.exit("identities left after --redact: %s (of %d)" % (left[:5], len(macs)))
print("redacted: none of %d MACs/GUIDs left" % len(macs))
PY

# This node, live: doctor here and doctor on its capture agree.
check "" live
check "" live-redacted --redact

# Bad input: an existing output without --force, a directory that does not exist.
touch "$work/exists.tar.gz"
if "$fabscope" capture -o "$work/exists.tar.gz" 2> "$work/err"; then echo "overwrote without --force"; exit 1; fi
grep -q "exists.tar.gz: exists" "$work/err" || { cat "$work/err"; exit 1; }
if "$fabscope" capture -o "$work/no/such/dir/x.tar.gz" 2> "$work/err"; then echo "wrote into a missing dir"; exit 1; fi
grep -q "does not exist" "$work/err" || { cat "$work/err"; exit 1; }
echo "ok"
