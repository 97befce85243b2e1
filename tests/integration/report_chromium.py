#!/usr/bin/env python3
"""`fabscope report` in a real browser: headless Chromium, with networking disabled, opens
reports made from the test fixtures. Asserts on the rendered DOM (--dump-dom): every section
present, each plotted series holds one point per non-zero size of its input, every point has a
hover title; takes a desktop and a phone-width screenshot (--screenshot) and fails on errors in
Chromium's log. The screenshots stay in OUTDIR (under the build directory) for a person to see.

Usage: report_chromium.py FABSCOPE SOURCE_DIR OUTDIR CHROMIUM
"""
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

fabscope, source, outdir, chromium = sys.argv[1:5]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 120), **kw)


# Chromium flags that run in a container without a display, D-Bus or network; every host name
# resolves to nothing and every request would go to a closed proxy port, so a page that tried
# to load anything would show it as a net::ERR in the log.
CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND",
                "--proxy-server=http://127.0.0.1:9", "--enable-logging=stderr", "--v=0"]
# Lines every headless run prints in a container and that say nothing about the page.
NOISE = re.compile(r"dbus|D-Bus|Fontconfig|/usr/bin/chromium: \d+: \[|gpu_init|angle|viz_main|"
                   r"command_buffer|sandbox|Xlib|ozone|vaapi|GpuControl|shared_image|"
                   r"Failed to adjust OOM score|Unable to open /proc|bus\.cc|object_proxy", re.I)


def chrome(url, *extra, timeout=120):
    with tempfile.TemporaryDirectory(prefix="fabscope-chromium-") as profile:
        r = run([chromium, *CHROME_FLAGS, "--user-data-dir=" + profile, *extra, url], timeout=timeout)
    errors = [l for l in r.stderr.splitlines()
              if re.search(r":(ERROR|FATAL):|Uncaught|net::ERR_|Refused to|Failed to load", l) and not NOISE.search(l)]
    return r, errors


class Dom(html.parser.HTMLParser):
    """Sections, findings, and per plot each series with its points (and whether each has a
    <title>). Series groups hold no nested <g>; points hold only their <title>."""

    def __init__(self):
        super().__init__()
        self.sections, self.findings = [], []
        self.series = {}         # (svg id, series label) -> {"declared", "points"}
        self.svg = None
        self.current = None
        self.point_open = None   # tag of the point element whose <title> is awaited
        self.untitled = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "section":
            self.sections.append(a.get("id"))
        elif tag == "svg" and "plot" in classes:
            self.svg = a.get("id")
        elif tag == "g" and "series" in classes:
            self.current = (self.svg, a.get("data-series"))
            self.series[self.current] = {"declared": int(a.get("data-points", -1)), "points": 0}
        elif tag == "tr" and "finding" in classes:
            self.findings.append(a.get("data-id"))
        elif self.current and "pt" in classes:
            self.series[self.current]["points"] += 1
            self.point_open = tag
        elif tag == "title" and self.point_open:
            self.point_open = None

    def handle_endtag(self, tag):
        if self.point_open and tag == self.point_open:
            self.untitled += 1
            self.point_open = None
        elif tag == "g" and self.current:
            self.current = None
        elif tag == "svg":
            self.svg = None


def nonzero_sizes_json(path):
    doc = json.load(open(path))
    sizes = [r["size_bytes"] for r in doc["results"] if r["size_bytes"] > 0]
    in_place = [r["size_bytes"] for r in doc["results"] if r["size_bytes"] > 0 and r.get("in_place")]
    return len(sizes), len(in_place)


def nonzero_sizes_text(path):
    n = 0
    for line in open(path):
        f = line.split()
        if len(f) >= 13 and f[0].isdigit() and f[1].isdigit() and int(f[0]) > 0:
            n += 1
    return n, n


os.makedirs(outdir, exist_ok=True)
for f in os.listdir(outdir):
    os.remove(os.path.join(outdir, f))
doctor_json = os.path.join(outdir, "rxe-vm-doctor.json")
r = run([fabscope, "doctor", "--json", "--root", os.path.join(source, "tests/fixtures/rxe-vm")])
check(r.returncode in (0, 1, 2) and r.stdout.startswith("{"), "fabscope doctor --json on the rxe-vm fixture")
open(doctor_json, "w").write(r.stdout)

bench = os.path.join(source, "tests/golden/bench/h200x2-all_reduce.json")
check_ib = os.path.join(source, "tests/golden/check/procfs-infiniband.json")
nccl = os.path.join(source, "tests/fixtures/nccl-tests/a3mega-h100x16-all_reduce.txt")
tune = os.path.join(source, "tests/fixtures/tune-simulated/seed1-all_reduce-all_gather.json")
report = os.path.join(outdir, "report.html")
r = run([fabscope, "report", doctor_json, check_ib, bench, tune, "--nccl-tests", nccl, "-o", report])
check(r.returncode == 0 and r.stdout.strip() == report, "fabscope report writes " + report + " " + r.stderr)
size = os.path.getsize(report)
check(size < 3 << 20, "report is %d bytes (under 3 MiB)" % size)

url = "file://" + os.path.abspath(report)
r, errors = chrome(url, "--dump-dom")
check(r.returncode == 0 and "</html>" in r.stdout, "chromium --dump-dom renders the page")
check(not errors, "no error in Chromium's log for --dump-dom: %s" % errors[:5])
open(os.path.join(outdir, "report.dom.html"), "w").write(r.stdout)
dom = Dom()
dom.feed(r.stdout)
external = re.findall(r'<(?:img|script|link|iframe|object|embed|video|audio|source)\b|\bsrc="|url\(|@import', r.stdout)
check(not external, "nothing in the rendered page loads a resource: %s" % external[:5])
for s in ("summary", "findings", "bench", "tune"):
    check(s in dom.sections, "section %s present" % s)
expected = {}
n, ip = nonzero_sizes_json(bench)
expected["h200x2-all_reduce out-of-place"], expected["h200x2-all_reduce in-place"] = n, ip
n, ip = nonzero_sizes_text(nccl)
expected["a3mega-h100x16-all_reduce out-of-place"], expected["a3mega-h100x16-all_reduce in-place"] = n, ip
for plot in ("plot-busbw-all_reduce", "plot-time-all_reduce"):
    for label, count in expected.items():
        got = dom.series.get((plot, label))
        check(got is not None, "%s: series '%s' plotted" % (plot, label))
        if got:
            check(got["points"] == count and got["declared"] == count,
                  "%s: series '%s' has %d points, its input %d non-zero sizes" % (plot, label, got["points"], count))
# Tune: one point per verified size, split by whether the tuned choice was kept.
tdoc = json.load(open(tune))
for c in tdoc["collectives"]:
    kept = sum(1 for z in c["sizes"] if z.get("speedup") is not None and z.get("kept_tuned") and z["bytes"] > 0)
    other = sum(1 for z in c["sizes"] if z.get("speedup") is not None and not z.get("kept_tuned") and z["bytes"] > 0)
    plot = "plot-tune-1-%s-gain" % c["collective"]
    for label, n in (("seed1-all_reduce-all_gather tuned (written)", kept),
                     ("seed1-all_reduce-all_gather not faster (default kept)", other)):
        got = dom.series.get((plot, label), {"points": 0, "declared": 0}) if n else {"points": 0, "declared": 0}
        check(got["points"] == n, "%s: '%s' has %d points, the input %d sizes" % (plot, label, got["points"], n))
check("SIMULATED: no GPU was measured" in r.stdout, "the simulated tune run says SIMULATED")
check(dom.untitled == 0, "every plotted point has a hover <title> (%d without)" % dom.untitled)
check("os.memlock_limited" in dom.findings and "link.rate_degraded" in dom.findings,
      "findings of both node inputs are listed")

for name, size_arg in (("report.png", "--window-size=1100,6400"), ("report-phone.png", "--window-size=390,9000")):
    shot = os.path.join(outdir, name)
    r, errors = chrome(url, "--screenshot=" + shot, size_arg, "--hide-scrollbars")
    ok = r.returncode == 0 and os.path.exists(shot) and open(shot, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    check(ok, "chromium --screenshot wrote " + shot)
    check(not errors, "no error in Chromium's log for %s: %s" % (name, errors[:5]))

# Bad inputs never reach the browser: exit 3, the message names the file.
empty = os.path.join(outdir, "empty.json")
open(empty, "w").close()
r = run([fabscope, "report", empty, "-o", os.path.join(outdir, "never.html")])
check(r.returncode == 3 and empty in r.stderr and not os.path.exists(os.path.join(outdir, "never.html")),
      "an empty input exits 3 naming it")

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
