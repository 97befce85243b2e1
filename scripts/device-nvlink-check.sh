#!/usr/bin/env bash
# On a node with NVIDIA GPUs: fabscope's NVLink facts (probe, check, exporter) against nvidia-smi,
# and its NVLink data counters against the bytes a `fabscope bench` all-reduce sent (issue 48).
# fabscope is built elsewhere, with CUDA and NCCL for the bench step:
#
#   FABSCOPE=/path/to/fabscope OUT=/path/to/out scripts/device-nvlink-check.sh
#
# Writes every output under $OUT/nvlink/ (and $OUT/nvlink.tar.gz) and prints PASS/FAIL/SKIP lines,
# also kept in $OUT/nvlink/summary.txt. Exit 0 when no line is FAIL. Each step has a timeout; the
# whole run stays well under 600 s (the bench: one 1 GiB all-reduce, -n 20 -w 5).
# Needs: nvidia-smi, python3; fabscope built with CUDA+NCCL for the bench (without them the
# throughput comparison is a SKIP). NVLink SHARP stays off (NCCL_NVLS_ENABLE=0) so the payload
# goes GPU to GPU over the links the counters count.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/device-out}
FABSCOPE=${FABSCOPE:-}
if [[ -z $FABSCOPE ]]; then
  for c in "$ROOT/build/src/cli/fabscope" /tmp/fabscope-x2/build/src/cli/fabscope "$(command -v fabscope 2>/dev/null)"; do
    [[ -n $c && -x $c ]] && { FABSCOPE=$c; break; }
  done
fi
BENCH_SIZE=${BENCH_SIZE:-1G}
BENCH_ITERS=${BENCH_ITERS:-20}
BENCH_WARMUP=${BENCH_WARMUP:-5}
export NCCL_NVLS_ENABLE=0
D=$OUT/nvlink
mkdir -p "$D"
: >"$D/summary.txt"

note() { echo "$*" | tee -a "$D/summary.txt"; }
step() {  # step NAME TIMEOUT CMD...: stdout in NAME.out, stderr in NAME.err, rc in the summary
  local name=$1 limit=$2 rc
  shift 2
  timeout -k 5 "$limit" "$@" >"$D/$name.out" 2>"$D/$name.err"
  rc=$?
  echo "step $name rc=$rc" >>"$D/steps.txt"
  return $rc
}
trap 'tar -C "$OUT" -czf "$OUT/nvlink.tar.gz" nvlink 2>/dev/null' EXIT

if [[ -z $FABSCOPE || ! -x $FABSCOPE ]]; then
  note "FAIL setup: no fabscope binary (set FABSCOPE=/path/to/fabscope)"
  exit 1
fi
note "INFO fabscope: $FABSCOPE ($("$FABSCOPE" --version 2>/dev/null | head -1))"
command -v nvidia-smi >/dev/null || { note "FAIL setup: nvidia-smi not found"; exit 1; }
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv,noheader >"$D/gpus.txt" 2>&1
note "INFO GPUs: $(tr '\n' ';' <"$D/gpus.txt")"

step smi-nvlink-s 30 nvidia-smi nvlink -s
step smi-nvlink-e 30 nvidia-smi nvlink -e
step smi-nvlink-p 30 nvidia-smi nvlink -p
step smi-topo-m 30 nvidia-smi topo -m
step probe 60 "$FABSCOPE" probe --json
step probe-text 60 "$FABSCOPE" probe
step check 120 "$FABSCOPE" check --json
step exporter 120 "$FABSCOPE" exporter --once

# The throughput counters around one all-reduce: fabscope's probe and nvidia-smi, before and after.
step smi-gtd-before 30 nvidia-smi nvlink -gt d
step probe-before 60 "$FABSCOPE" probe --json
step bench 300 "$FABSCOPE" bench all_reduce --sizes "$BENCH_SIZE" -n "$BENCH_ITERS" -w "$BENCH_WARMUP" --json
step probe-after 60 "$FABSCOPE" probe --json
step smi-gtd-after 30 nvidia-smi nvlink -gt d

python3 - "$D" "$BENCH_ITERS" "$BENCH_WARMUP" <<'PY' | tee -a "$D/summary.txt"
import json, re, sys, os
d, iters, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fails = 0
def say(kind, what):
    global fails
    fails += kind == "FAIL"
    print(f"{kind} {what}")
def load(name):
    try:
        with open(os.path.join(d, name)) as f:
            return json.load(f)
    except Exception as e:
        say("FAIL", f"{name}: not JSON ({e})")
        return None
def text(name):
    try:
        return open(os.path.join(d, name), errors="replace").read()
    except OSError:
        return ""
def norm(bus):  # "00000000:07:00.0" -> "0000:07:00.0"
    bus = bus.strip().lower()
    m = re.match(r"^([0-9a-f]+):([0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f])$", bus)
    return f"{int(m.group(1), 16):04x}:{m.group(2)}" if m else bus
def per_gpu(txt):  # nvidia-smi nvlink output: {gpu index: [lines of that GPU]}
    out, cur = {}, None
    for line in txt.splitlines():
        m = re.match(r"^GPU (\d+):", line)
        if m:
            cur = int(m.group(1)); out[cur] = []
        elif cur is not None and line.strip():
            out[cur].append(line.strip())
    return out

probe = load("probe.out")
if probe is None:
    sys.exit(1)
gpus = probe.get("gpus", [])
say("INFO", f"probe: {len(gpus)} GPUs, " + ", ".join(f"GPU{g['index']} {len(g.get('nvlinks', []))} links" for g in gpus))

# 1. Links present and up, per GPU, against nvidia-smi nvlink -s ("Link N: 26.562 GB/s" or "<inactive>").
smi_s = per_gpu(text("smi-nvlink-s.out"))
for g in gpus:
    lines = smi_s.get(g["index"], [])
    links = [l for l in lines if re.match(r"^Link \d+:", l)]
    smi_up = sum(1 for l in links if "inactive" not in l.lower() and "GB/s" in l)
    mine = g.get("nvlinks", [])
    up = sum(1 for l in mine if l.get("active"))
    ok = len(links) == len(mine) and smi_up == up
    say("PASS" if ok else "FAIL", f"GPU{g['index']} links: fabscope {up}/{len(mine)} up, nvidia-smi nvlink -s {smi_up}/{len(links)}")
    versions = sorted({l.get("version_code") for l in mine})
    if mine:
        say("PASS" if len(versions) == 1 and versions[0] else "FAIL",
            f"GPU{g['index']} NVLink version codes {versions} (one per GPU expected; H100/H200: 6 = NVLink 4.0)")

# 2. Remote ends against nvidia-smi nvlink -p ("Link N: 00000000:07:00.0" or the switch's id).
smi_p = per_gpu(text("smi-nvlink-p.out"))
gpu_addrs = {g["pci_address"] for g in gpus}
if not any(smi_p.values()):
    say("SKIP", "remote ends: nvidia-smi nvlink -p printed nothing")
for g in gpus:
    remotes = {}
    for l in smi_p.get(g["index"], []):
        m = re.match(r"^Link (\d+):\s*(\S+)", l)
        if m:
            remotes[int(m.group(1))] = norm(m.group(2))
    if not remotes:
        continue
    bad = []
    for l in g.get("nvlinks", []):
        r = remotes.get(l["link"])
        if r is None:
            continue
        if l.get("remote_type") == "gpu" and r != l.get("remote_pci_address"):
            bad.append(f"link {l['link']}: fabscope gpu {l.get('remote_pci_address')}, nvidia-smi {r}")
        if l.get("remote_type") == "switch" and r in gpu_addrs:
            bad.append(f"link {l['link']}: fabscope switch, nvidia-smi GPU {r}")
    types = sorted({l.get("remote_type") for l in g.get("nvlinks", [])})
    say("FAIL" if bad else "PASS", f"GPU{g['index']} remote ends {types}" + (": " + "; ".join(bad[:4]) if bad else " agree with nvidia-smi nvlink -p"))

# 3. Error counters against nvidia-smi nvlink -e (read after the probe: at least the probe's value).
smi_e = per_gpu(text("smi-nvlink-e.out"))
names = {"Replay Errors": "replay_errors", "Recovery Errors": "recovery_errors", "CRC Errors": "crc_flit_errors"}
for g in gpus:
    smi = {}
    for l in smi_e.get(g["index"], []):
        m = re.match(r"^Link (\d+): ([A-Za-z ]+): (\d+)", l)
        if m and m.group(2) in names:
            smi[(int(m.group(1)), names[m.group(2)])] = int(m.group(3))
    if not smi:
        if g.get("nvlinks"):
            say("SKIP", f"GPU{g['index']} error counters: nvidia-smi nvlink -e printed none")
        continue
    bad = []
    for l in g.get("nvlinks", []):
        for key in names.values():
            s, f = smi.get((l["link"], key)), l.get(key)
            if s is not None and (f is None or f > s or s - f > 1000):
                bad.append(f"link {l['link']} {key}: fabscope {f}, nvidia-smi {s}")
    say("FAIL" if bad else "PASS", f"GPU{g['index']} replay/recovery/CRC counters" + (": " + "; ".join(bad[:4]) if bad else " agree with nvidia-smi nvlink -e"))

# 4. The GPU matrix against nvidia-smi topo -m.
topo = text("smi-topo-m.out")
rows = {}
header = None
for line in topo.splitlines():
    clean = re.sub(r"\x1b\[[0-9;]*m", "", line)
    cells = clean.split()
    if header is None and clean.strip().startswith("GPU0") and "CPU" in clean:
        header = [c for c in cells if re.match(r"^GPU\d+$", c)]
        continue
    if header is not None and cells and re.match(r"^GPU\d+$", cells[0]):
        rows[cells[0]] = cells[1:1 + len(header)]
if not header:
    header = ["GPU0"] if len(gpus) == 1 else None
by_addr = {g["pci_address"]: g["index"] for g in gpus}
pairs = probe.get("gpu_topology", [])
if len(gpus) < 2:
    say("SKIP", "GPU matrix: fewer than two GPUs")
elif not header or not rows:
    say("FAIL", "GPU matrix: nvidia-smi topo -m not parsed")
else:
    bad, seen = [], 0
    for p in pairs:
        a, b = by_addr.get(p["gpu_a"]), by_addr.get(p["gpu_b"])
        row = rows.get(f"GPU{a}")
        if row is None or f"GPU{b}" not in header:
            continue
        smi = row[header.index(f"GPU{b}")]
        seen += 1
        if smi != p.get("level"):
            bad.append(f"GPU{a}-GPU{b}: fabscope {p.get('level') or '?'} ({p.get('source')}), nvidia-smi {smi}")
    expected = len(gpus) * (len(gpus) - 1) // 2
    ok = not bad and seen == expected
    say("PASS" if ok else "FAIL", f"GPU matrix: {seen}/{expected} pairs compared" + (": " + "; ".join(bad[:6]) if bad else ", all agree with nvidia-smi topo -m"))

# 5. Checks: a healthy node has no nvlink.* finding; any is listed for the lead to judge.
check = load("check.out")
if check is not None:
    found = [f for f in check.get("findings", []) if str(f.get("id", "")).startswith("nvlink.")]
    for f in found:
        say("INFO", f"check {f.get('id')} {f.get('severity')} {f.get('subject')}: {f.get('evidence')}")
    say("PASS" if not found else "FAIL", f"check: {len(found)} nvlink.* findings (a healthy node has none)")

# 6. Exporter: one fabscope_gpu_nvlink_up sample per link the probe saw, a pair series per pair.
expo = text("exporter.out")
ups = [l for l in expo.splitlines() if l.startswith("fabscope_gpu_nvlink_up{")]
nlinks = sum(len(g.get("nvlinks", [])) for g in gpus)
say("PASS" if len(ups) == nlinks else "FAIL", f"exporter: {len(ups)} fabscope_gpu_nvlink_up samples for {nlinks} links")
pair_lines = [l for l in expo.splitlines() if l.startswith("fabscope_gpu_pair_nvlinks{")]
nvml_pairs = sum(1 for p in pairs if p.get("nvlinks") is not None)
say("PASS" if len(pair_lines) == nvml_pairs else "FAIL", f"exporter: {len(pair_lines)} fabscope_gpu_pair_nvlinks samples for {nvml_pairs} NVML pairs")
for fam in ("fabscope_gpu_nvlink_errors_total", "fabscope_gpu_nvlinks_transmitted_bytes_total",
            "fabscope_gpu_nvlink_data_transmitted_bytes_total"):
    n = sum(1 for l in expo.splitlines() if l.startswith(fam + "{"))
    say("INFO", f"exporter: {n} samples of {fam}")

# 7. Throughput: the data counter's growth against the all-reduce's payload and nvidia-smi -gt d.
before, after = load("probe-before.out"), load("probe-after.out")
bench = load("bench.out") if os.path.getsize(os.path.join(d, "bench.out")) > 0 else None
def gtd(name):  # {(gpu, link): tx KiB}
    out = {}
    for gi, lines in per_gpu(text(name)).items():
        for l in lines:
            m = re.match(r"^Link (\d+): Data Tx: (\d+) KiB", l)
            if m:
                out[(gi, int(m.group(1)))] = int(m.group(2))
    return out
if bench is None or before is None or after is None:
    say("SKIP", "throughput: the bench did not run (fabscope built without CUDA/NCCL? see bench.err)")
else:
    n = bench.get("environment", {}).get("nranks") or len(gpus)
    size = None
    for r in bench.get("results", []):
        size = r.get("size_bytes") or (r.get("count", 0) * 4) or size
    # Out-of-place and in-place, each: the warm-up calls, the timed ones, and one call whose
    # result is checked after the timing (src/bench/gpu/timing.cpp).
    calls = 2 * (iters + warmup + 1)
    per_call = size * 2 * (n - 1) / n if size else None  # a ring all-reduce: 2(n-1)/n x size per rank
    g0 = gtd("smi-gtd-before.out"); g1 = gtd("smi-gtd-after.out")
    for gb in before.get("gpus", []):
        ga = next((x for x in after.get("gpus", []) if x["pci_address"] == gb["pci_address"]), None)
        if not ga or gb.get("nvlink_data_transmitted_bytes") is None or ga.get("nvlink_data_transmitted_bytes") is None:
            say("SKIP", f"GPU{gb['index']} throughput: no NVLink data counter")
            continue
        moved = ga["nvlink_data_transmitted_bytes"] - gb["nvlink_data_transmitted_bytes"]
        if per_call:
            expected = calls * per_call
            ratio = moved / expected if expected else 0
            say("PASS" if abs(ratio - 1) <= 0.05 else "FAIL",
                f"GPU{gb['index']} NVLink data sent {moved} B, all-reduce payload {int(expected)} B "
                f"({calls} calls of {size} B over {n} ranks): ratio {ratio:.4f} (within 5%)")
        smi = sum(v - g0.get(k, v) for k, v in g1.items() if k[0] == gb["index"]) * 1024
        if smi:
            ratio = moved / smi
            say("PASS" if abs(ratio - 1) <= 0.05 else "FAIL",
                f"GPU{gb['index']} NVLink data sent: fabscope {moved} B, nvidia-smi nvlink -gt d {smi} B: ratio {ratio:.4f}")
        else:
            say("SKIP", f"GPU{gb['index']} nvidia-smi nvlink -gt d gave no per-link Tx")
print(f"SUMMARY {'FAIL' if fails else 'PASS'} ({fails} failed)")
sys.exit(1 if fails else 0)
PY
exit "${PIPESTATUS[0]}"
