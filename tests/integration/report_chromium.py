#!/usr/bin/env python3
"""`fabscope report` in a real browser: headless Chromium, with networking disabled, opens
reports made from the test fixtures. Asserts on the rendered DOM (--dump-dom): every section
present, each plotted series holds one point per non-zero size of its input, every point has a
hover title; takes a desktop and a phone-width screenshot (--screenshot) and fails on errors in
Chromium's log. The screenshots stay in OUTDIR (under the build directory) for a person to see.

A report of findings whose "docs" strings are javascript:, data: and external URLs has, in
Chromium's DOM, no link but to the page and to relative docs paths.

A second report holds the cluster and rdma sections, from real runs (tests/fixtures/cluster-runs,
tests/fixtures/rdma-vm): the slow node of the 5-VM run carries its outlier marks, every rdma series
one point per size. A third is a SYNTHETIC 1,024-node cluster (CLUSTER_SYNTHETIC writes it): one
heat map of at most 64 x 64 cells, the file under 3 MiB, every slow link and slow node marked.

Two more are fabric pictures from SYNTHETIC fabscope.fabric documents written here in the schema
(the shapes of tests/fixtures/ibsim/leafspine.net and bench/fattree-topology.py): 8 switches drawn
whole, with a degraded, a not active and an erroring cable, beside a cluster run localized on that
fabric (its suspects marked, its heat map ordered by leaf); and 96 switches (64 leaves, 32 spines,
2,048 HCAs) drawn one box per tier, with the problem cables listed.

A mesh report from SYNTHETIC /metrics of four nodes (written here in the exporter's layout): the
two heat maps with one cell per probed pair, each with a hover title, the slow node's row and
column and the lossy pair marked and no other cell.

An nccl-tests -J JSON file (a real one) plotted beside its text output and a fabscope bench run, the
2x H200 run's NVLink limit line named after it (the H100 runs know no limit).

A job report from the SYNTHETIC /metrics of two nodes of a running job (tests/fixtures/job-synthetic,
the exporter's layout): one plot per communicator and op with one line per rank and a hover title on
every point, the slow rank's busbw cells (and only those) marked, the ranks of a node not given
listed as missing, the network wait table led by the rank that waits on the slow one.

Each of these is a part (overview, cluster, synthetic, fabric, mesh, job, inputs): --part=NAME
runs one, in OUTDIR/NAME, so ctest runs them as separate tests, each far inside its timeout;
without --part every part runs.

Usage: report_chromium.py FABSCOPE SOURCE_DIR OUTDIR CHROMIUM [CLUSTER_SYNTHETIC] [--part=NAME]
"""
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

PARTS = ("overview", "cluster", "synthetic", "fabric", "mesh", "job", "inputs")
args = [a for a in sys.argv[1:] if not a.startswith("--part=")]
chosen = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--part=")]
if len(args) < 4 or any(c not in PARTS for c in chosen):
    sys.exit("usage: report_chromium.py FABSCOPE SOURCE_DIR OUTDIR CHROMIUM [CLUSTER_SYNTHETIC] "
             "[--part=%s]" % "|".join(PARTS))
fabscope, source, outdir, chromium = args[:4]
synthetic = args[4] if len(args) > 4 else None
if chosen:
    outdir = os.path.join(outdir, chosen[0])
failures = []


def want(part):
    return not chosen or part in chosen


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
                   r"Failed to adjust OOM score|Unable to open /proc|bus\.cc|object_proxy|"
                   # the compositor's clock under load (viz display.cc), not the page
                   r"Frame latency is negative|"
                   # the browser's own IPC when a loaded headless run tears its frame down
                   # (mojo interface_endpoint_client.cc, FrameWidgetHost), not the page
                   r"interface_endpoint_client\.cc.*rejected by interface blink\.mojom\.FrameWidgetHost", re.I)


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
        self.cells, self.marks, self.labels = [], [], []  # heat map: cell, mark and label attributes
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
        elif tag == "rect" and "cell" in classes:
            self.cells.append(a)
            self.point_open = tag
        elif tag in ("rect", "path") and any(c.startswith("mark-") for c in classes):
            self.marks.append(a)
        elif tag == "text" and "node-label" in classes:
            self.labels.append(a)
        elif tag == "tr" and "finding" in classes:
            self.findings.append(a.get("data-check"))
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
    if os.path.isfile(os.path.join(outdir, f)):
        os.remove(os.path.join(outdir, f))
if want("overview"):
    doctor_json = os.path.join(outdir, "rxe-vm-doctor.json")
    r = run([fabscope, "doctor", "--json", "--root", os.path.join(source, "tests/fixtures/rxe-vm")])
    check(r.returncode in (0, 1, 2) and r.stdout.startswith("{"), "fabscope doctor --json on the rxe-vm fixture")
    open(doctor_json, "w").write(r.stdout)

bench = os.path.join(source, "tests/golden/bench/h200x2-all_reduce.json")
check_ib = os.path.join(source, "tests/golden/check/procfs-infiniband.json")
nccl = os.path.join(source, "tests/fixtures/nccl-tests/a3mega-h100x16-all_reduce.txt")
tune = os.path.join(source, "tests/fixtures/tune-simulated/seed1-all_reduce-all_gather.json")
if want("overview"):
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


def ranks(attr):
    """"3" -> range(3, 4); "16-31" -> range(16, 32)"""
    lo, _, hi = attr.partition("-")
    return range(int(lo), int(hi or lo) + 1)


def check_outliers(dom, doc, name):
    """Every slow node's row and column cells and label, and every slow link's two cells, carry
    their marks (whether the heat map has one node per cell or blocks of nodes)."""
    pw = doc["pairwise"]
    for s in pw["slow_nodes"]:
        r = s["rank"]
        cells = [c for c in dom.cells if r in ranks(c["data-from"]) or r in ranks(c["data-to"])]
        check(cells and all("slow-node" in c.get("data-outlier", "") for c in cells),
              "%s: the %d cells of slow node %d's row and column are marked slow-node" % (name, len(cells), r))
        check(sum(1 for m in dom.marks if "mark-node" in m["class"] and r in ranks(m["data-ranks"])) == 2,
              "%s: slow node %d's row and column are outlined" % (name, r))
        check(any("slow-node" in l["class"] and r in ranks(l["data-ranks"]) for l in dom.labels),
              "%s: slow node %d's label is marked" % (name, r))
    for l in pw["slow_links"]:
        for a, b in ((l["a"], l["b"]), (l["b"], l["a"])):
            cell = [c for c in dom.cells if a in ranks(c["data-from"]) and b in ranks(c["data-to"])]
            check(len(cell) == 1 and "slow-link" in cell[0].get("data-outlier", ""),
                  "%s: the cell of slow link %d -> %d is marked slow-link" % (name, a, b))
            check(any("mark-link" in m["class"] and a in ranks(m["data-from"]) and b in ranks(m["data-to"])
                      for m in dom.marks), "%s: the cell of slow link %d -> %d is crossed" % (name, a, b))
    others = [c for c in dom.cells if "data-outlier" in c and not any(
        r in ranks(c["data-from"]) or r in ranks(c["data-to"]) for r in [s["rank"] for s in pw["slow_nodes"]])
        and not any((l["a"] in ranks(c["data-from"]) and l["b"] in ranks(c["data-to"])) or
                    (l["b"] in ranks(c["data-from"]) and l["a"] in ranks(c["data-to"])) for l in pw["slow_links"])]
    check(not others, "%s: no other cell is marked (%d)" % (name, len(others)))


def render_and_load(inputs, name):
    page = os.path.join(outdir, name + ".html")
    r = run([fabscope, "report", *inputs, "-o", page], timeout=300)
    check(r.returncode == 0 and r.stdout.strip() == page, "fabscope report writes %s %s" % (page, r.stderr))
    r, errors = chrome("file://" + os.path.abspath(page), "--dump-dom", timeout=300)
    check(r.returncode == 0 and "</html>" in r.stdout, "chromium --dump-dom renders %s" % name)
    check(not errors, "no error in Chromium's log for %s: %s" % (name, errors[:5]))
    open(os.path.join(outdir, name + ".dom.html"), "w").write(r.stdout)
    dom = Dom()
    dom.feed(r.stdout)
    shot = os.path.join(outdir, name + ".png")
    r2, errors = chrome("file://" + os.path.abspath(page), "--screenshot=" + shot, "--window-size=1100,5000",
                        "--hide-scrollbars", timeout=300)
    check(r2.returncode == 0 and os.path.exists(shot), "chromium --screenshot wrote " + shot)
    check(not errors, "no error in Chromium's log for %s.png: %s" % (name, errors[:5]))
    return page, dom


# Cluster and rdma sections from real runs.
runs = os.path.join(source, "tests/fixtures/cluster-runs")
rdma_dir = os.path.join(source, "tests/fixtures/rdma-vm")
vm5 = os.path.join(runs, "vm5-slow-node.json")
rdma_inputs = [os.path.join(rdma_dir, f) for f in sorted(os.listdir(rdma_dir)) if f.endswith(".json")]
if want("cluster"):
    page, dom = render_and_load([vm5, os.path.join(runs, "mpirun4-port-down.json"),
                                 os.path.join(runs, "mpirun4-mtu.json"), *rdma_inputs], "cluster-rdma")
    for s in ("summary", "findings", "cluster", "rdma"):
        check(s in dom.sections, "cluster-rdma: section %s present" % s)
    vdoc = json.load(open(vm5))
    # The first heat map is vm5's: one cell per measured direction.
    n5 = sum(2 for p in vdoc["pairwise"]["pairs"] if p["a_to_b_gbps"] is not None and p["b_to_a_gbps"] is not None)
    vm5_dom = Dom()
    vm5_dom.feed(open(os.path.join(outdir, "cluster-rdma.dom.html")).read().split('id="heatmap-2"')[0])
    check(len(vm5_dom.cells) == n5, "vm5: %d heat map cells, %d measured directions" % (len(vm5_dom.cells), n5))
    check(vdoc["pairwise"]["slow_nodes"] and vdoc["pairwise"]["slow_nodes"][0]["rank"] == 3, "vm5 fixture: vm3 is the slow node")
    check_outliers(vm5_dom, vdoc, "vm5")
    for f in rdma_inputs:
        d = json.load(open(f))
        label = os.path.splitext(os.path.basename(f))[0]
        sizes = len([z for z in d["sizes"] if z["bytes"] > 0])
        if d["options"]["test"] == "lat":
            for q in ("min", "median", "p99", "max"):
                got = dom.series.get(("plot-rdma-lat-2", "%s %s" % (label, q)), {"points": 0})
                check(got["points"] == sizes, "rdma %s %s: %d points, %d sizes" % (label, q, got["points"], sizes))
        else:
            got = dom.series.get(("plot-rdma-bw-1", "%s %s (%s)" % (label, d["options"]["op"], d["role"])), {"points": 0})
            check(got["points"] == sizes, "rdma %s: %d points, %d sizes" % (label, got["points"], sizes))
    check(dom.untitled == 0, "cluster-rdma: every plotted point and heat map cell has a hover <title> (%d without)"
          % dom.untitled)

    # nccl-tests' own -J file (a real one, tests/fixtures/nccl-tests-json) beside its text and a fabscope
    # bench run: one all_reduce plot of three runs on different machines, the NVLink limit line the H200
    # run's only.
    nccl_json = os.path.join(source, "tests/fixtures/nccl-tests-json/h100-all_reduce-I.json")
    page, jdom = render_and_load([bench, "--nccl-tests", nccl_json, "--nccl-tests", nccl], "nccl-tests-json")
    njdoc = json.load(open(nccl_json))
    for plot in ("plot-busbw-all_reduce", "plot-time-all_reduce"):
        for placement in ("out-of-place", "in-place"):
            got = jdom.series.get((plot, "h100-all_reduce-I " + placement), {"points": 0})
            check(got["points"] == len(njdoc["results"]), "nccl-tests -J: %s %s has %d points, the file %d sizes"
                  % (plot, placement, got["points"], len(njdoc["results"])))
    text = open(page).read()
    check(text.count('<g class="ref"') == 1 and 'data-runs="h200x2-all_reduce"' in text,
          "the NVLink limit line is drawn once, for the H200 run")

if want("synthetic"):
    # A SYNTHETIC 1,024-node cluster: bounded heat map, bounded file, every outlier marked.
    if synthetic:
        big = os.path.join(outdir, "synthetic-1024-cluster.json")
        with open(big, "w") as out:
            r = subprocess.run([synthetic, "1024"], stdout=out, stderr=subprocess.PIPE, text=True, timeout=120)
        check(r.returncode == 0, "the synthetic generator wrote %s %s" % (big, r.stderr))
        bdoc = json.load(open(big))
        check(bdoc["launcher"] == "synthetic" and bdoc["world"] == 1024, "the 1,024-node document says it is synthetic")
        check(len(bdoc["pairwise"]["slow_nodes"]) == 2 and len(bdoc["pairwise"]["slow_links"]) == 2,
              "the synthetic cluster has 2 slow nodes and 2 slow links")
        page, bdom = render_and_load([big], "synthetic-1024")
        size = os.path.getsize(page)
        check(size < 3 << 20, "the 1,024-node report is %d bytes (under 3 MiB)" % size)
        check(0 < len(bdom.cells) <= 64 * 64, "the 1,024-node heat map has %d cells (at most 64 x 64)" % len(bdom.cells))
        check_outliers(bdom, bdoc, "synthetic-1024")
        text = open(page).read()
        for l in bdoc["pairwise"]["slow_links"]:
            check('data-outlier="slow-link" data-a="%d" data-b="%d"' % (l["a"], l["b"]) in text,
                  "slow link %d-%d is listed in the outlier table" % (l["a"], l["b"]))
        check(text.count('class="mark-failed"') == 2, "the failed pair's two cells are marked")
        os.remove(big)  # 49 MB; the report and its screenshot stay

if want("fabric"):
    # Fabric pictures from SYNTHETIC sweeps in the fabscope.fabric schema (docs/formats.md): every
    # field the reader checks, written the way `fabscope fabric --save` writes it.
    def synth_fabric(leaves, spines, per_leaf, degraded=(), not_active=(), errors=None):
        """HCAs "H-lLL-HH mlx5_0" (LIDs from 1), then leaves "S-leafLL" (ports 1..per_leaf to HCAs, then
        one to each spine), then spines "S-spineSS" (port l+1 to leaf l); every cable 4X HDR Active.
        degraded: (leaf, spine) uplinks at 1X; not_active: (leaf, spine) uplinks whose leaf end is Init;
        errors: {(leaf, spine): SymbolErrorCounter at the spine end}."""
        errors = errors or {}
        nodes = []
        def info(state="Active", width=4, lid=0):
            return {"state": state, "phys_state": "LinkUp" if state != "Down" else "Polling",
                    "width_active": width if state != "Down" else 0, "width_enabled": [1, 4], "width_supported": [1, 4],
                    "speed_active": "HDR" if state != "Down" else "?", "speed_enabled": ["SDR", "HDR"],
                    "speed_supported": ["SDR", "HDR"], "mtu_active": 4096 if state != "Down" else 0, "mtu_max": 4096,
                    "lid": lid, "lmc": 0, "sm_lid": 1, "capability_mask": 0, "link_down_default": 2}
        def node(kind, guid, desc, nports, lid):
            sw = kind == "switch"
            ports = [{"number": p, "guid": "0x%016x" % (guid if sw else guid + p),
                      "info": info("Active" if sw and p == 0 else "Down", lid=lid if (p == 0 or not sw) else 0),
                      "counters": None, "counters_extended": False, "remote_node": -1, "remote_port": 0, "note": ""}
                     for p in range(0 if sw else 1, nports + 1)]
            nodes.append({"type": kind, "guid": "0x%016x" % guid, "system_guid": "0x%016x" % guid, "description": desc,
                          "vendor_id": 713, "device_id": 54000 if sw else 4123, "revision": 0, "firmware": "",
                          "num_ports": nports, "dr_path": "0", "note": "", "ports": ports})
            return len(nodes) - 1
        def port(n, p):
            return nodes[n]["ports"][p if nodes[n]["type"] == "switch" else p - 1]
        def connect(a, pa, b, pb, width=4):
            for n, p, r, rp in ((a, pa, b, pb), (b, pb, a, pa)):
                x = port(n, p)
                x["info"] = info("Active", width, x["info"]["lid"])
                x["remote_node"], x["remote_port"] = r, rp
        lid = 1
        hosts, leaf, spine = [], [], []
        for l in range(leaves):
            for h in range(per_leaf):
                hosts.append(node("hca", 0x10000 + 16 * len(hosts), "H-l%02d-%02d mlx5_0" % (l, h), 1, lid))
                lid += 1
        for l in range(leaves):
            leaf.append(node("switch", 0x200000 + l, "S-leaf%02d" % l, per_leaf + spines, lid))
            lid += 1
        for s_ in range(spines):
            spine.append(node("switch", 0x300000 + s_, "S-spine%02d" % s_, leaves, lid))
            lid += 1
        for l in range(leaves):
            for h in range(per_leaf):
                connect(hosts[l * per_leaf + h], 1, leaf[l], h + 1)
            for s_ in range(spines):
                connect(leaf[l], per_leaf + s_ + 1, spine[s_], l + 1, 1 if (l, s_) in degraded else 4)
                if (l, s_) in not_active:
                    port(leaf[l], per_leaf + s_ + 1)["info"]["state"] = "Init"
                if (l, s_) in errors:
                    port(spine[s_], l + 1)["counters"] = {"SymbolErrorCounter": errors[(l, s_)], "LinkDownedCounter": 1}
        links = []
        for n, nd in enumerate(nodes):
            for p in nd["ports"]:
                if p["remote_node"] >= 0 and (n, p["number"]) < (p["remote_node"], p["remote_port"]):
                    links.append({"a_node": n, "a_port": p["number"], "b_node": p["remote_node"], "b_port": p["remote_port"]})
        doc = {"schema": "fabscope.fabric", "schema_version": 1, "source": "mlx5_0:1", "swept_at": "2026-01-01T00:00:00Z",
               "sweep_s": 0.5, "nodes": nodes, "links": links,
               "sms": [{"guid": nodes[0]["ports"][0]["guid"], "lid": 1, "priority": 15, "state": "MASTER",
                        "act_count": 1, "node": 0}], "notes": ["SYNTHETIC: written by tests/integration/report_chromium.py"]}
        return doc, hosts, leaf, spine


    class TopoDom(html.parser.HTMLParser):
        """The fabric section: links, switches, host boxes, tier boxes, suspect badges and table rows,
        each element's attributes with the text of its <title>."""

        KINDS = ("link", "switch", "hosts", "tier", "mark-suspect", "mark-errors", "suspect", "fabric-link",
                 "leaf-bound", "leaf-label", "node-label")

        def __init__(self):
            super().__init__()
            self.sections, self.svgs = [], []
            self.items = {k: [] for k in self.KINDS}
            self.waiting = []  # items whose <title> is awaited
            self.in_title = None

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            classes = (a.get("class") or "").split()
            if tag == "section":
                self.sections.append(a.get("id"))
            if tag == "svg" and "topology" in classes:
                self.svgs.append(a)
            for k in self.KINDS:
                if k in classes:
                    a["title"] = ""
                    self.items[k].append(a)
                    self.waiting.append(a)
            if tag == "title" and self.waiting:
                self.in_title = self.waiting.pop()
                self.waiting.clear()

        def handle_data(self, data):
            if self.in_title is not None:
                self.in_title["title"] += data

        def handle_endtag(self, tag):
            if tag == "title":
                self.in_title = None


    def render_topology(inputs, name):
        page, _ = render_and_load(inputs, name)
        d = TopoDom()
        d.feed(open(os.path.join(outdir, name + ".dom.html")).read())
        return page, d


    # 8 switches (the leaf/spine shape of tests/fixtures/ibsim/leafspine.net, 4 HCAs per leaf):
    # leaf01 -> spine00 at 1X, leaf02 -> spine03 Init, leaf03 - spine01 counting symbol errors.
    fab8, hosts8, leaf8, spine8 = synth_fabric(4, 4, 4, degraded={(1, 0)}, not_active={(2, 3)}, errors={(3, 1): 42})
    fab8_json = os.path.join(outdir, "synthetic-fabric-8.json")
    json.dump(fab8, open(fab8_json, "w"))
    # A cluster run localized on it: ranks interleaved over the leaves (rank r on leaf r % 4), the
    # nodes of leaf 2 slow with everyone, spine 2 and the cable leaf01:5 -> spine00:2 named suspects.
    n8 = len(hosts8)
    host_of = [hosts8[(r % 4) * 4 + r // 4] for r in range(n8)]
    def lid_of(n):
        return fab8["nodes"][n]["ports"][0]["info"]["lid"]
    cnodes, cpairs = [], []
    for r in range(n8):
        cnodes.append({"rank": r, "name": "node%02d" % r, "fabscope_version": "0.1.0", "error": "",
                       "ib_ports": [{"port": "mlx5_0:1", "lid": lid_of(host_of[r]), "node_guid": fab8["nodes"][host_of[r]]["guid"],
                                     "state": "ACTIVE"}]})
        for b in range(r + 1, n8):
            v = 40.0 if (r % 4 == 2 or b % 4 == 2) else 100.0
            cpairs.append({"a": r, "b": b, "a_to_b_gbps": v, "b_to_a_gbps": v})
    suspects = [
        {"kind": "switch", "name": "S-spine02", "node_index": spine8[2], "explained": 40, "slow_crossing": 40,
         "fast_crossing": 2, "alternatives": [], "examples": [{"from": 2, "to": 3, "from_name": "node02", "to_name": "node03"}]},
        {"kind": "cable", "name": "S-leaf01:5 -> S-spine00:2", "a": {"node_index": leaf8[1], "port": 5},
         "b": {"node_index": spine8[0], "port": 2}, "both_directions": False, "explained": 6, "slow_crossing": 6,
         "fast_crossing": 1, "alternatives": ["S-spine00"], "examples": []}]
    cluster8 = {"schema": "fabscope.cluster", "schema_version": 1, "launcher": "env", "world": n8, "nodes": cnodes,
                "attributes": [], "pairwise": {"mode": "all", "rounds": 1, "pairs": cpairs, "measured": len(cpairs),
                                               "judged": True, "slow_nodes": [], "slow_links": []},
                "localization": {"attempted": True, "why_not": "", "fabric_source": "mlx5_0:1", "threshold_gbps": 80.0,
                                 "observations": 2 * len(cpairs), "slow": 46, "fast": 194, "unrouted": 0,
                                 "unexplained": 0, "suspects": suspects, "notes": []},
                "findings": [], "summary": {"fail": 0, "warn": 0, "info": 0, "worst": "ok"}}
    cluster8_json = os.path.join(outdir, "synthetic-cluster-16.json")
    json.dump(cluster8, open(cluster8_json, "w"))
    page, td = render_topology([fab8_json, cluster8_json], "fabric-8")
    check("fabric" in td.sections and "cluster" in td.sections, "fabric-8: fabric and cluster sections present")
    check(len(td.svgs) == 1 and td.svgs[0].get("data-view") == "whole", "fabric-8: one picture, every switch drawn")
    check(len(td.items["switch"]) == 8, "fabric-8: 8 switch boxes (%d)" % len(td.items["switch"]))
    check(len(td.items["hosts"]) == 4 and all(h.get("data-hosts") == "4" for h in td.items["hosts"]),
          "fabric-8: one HCA box per leaf, 4 HCAs each")
    links = {l.get("data-link"): l for l in td.items["link"] if l.get("data-link")}
    check(len(links) == 16, "fabric-8: 16 leaf-spine cables drawn (%d)" % len(links))
    deg = links.get("S-leaf01:5 <-> S-spine00:2", {})
    check(deg.get("data-look") == "degraded", "fabric-8: the 1X cable is drawn degraded")
    check("S-leaf01:5" in deg.get("title", "") and "S-spine00:2" in deg.get("title", "") and "1X HDR" in deg.get("title", ""),
          "fabric-8: its hover text names both ends and its width: %r" % deg.get("title", ""))
    check(links.get("S-leaf02:8 <-> S-spine03:3", {}).get("data-look") == "not-active", "fabric-8: the Init cable is not active")
    err = links.get("S-leaf03:6 <-> S-spine01:4", {})
    check("SymbolErrorCounter=42" in err.get("title", "") and err.get("data-errors"),
          "fabric-8: the erroring cable's hover text gives its counter: %r" % err.get("title", ""))
    check(len(td.items["mark-errors"]) == 1, "fabric-8: one error mark")
    sw = {x.get("data-name"): x for x in td.items["switch"]}
    check(sw.get("S-spine02", {}).get("data-suspect") == "#1" and "SUSPECT #1" in sw.get("S-spine02", {}).get("title", ""),
          "fabric-8: suspect #1 (S-spine02) is marked and says so on hover")
    check(deg.get("data-suspect") == "#2", "fabric-8: suspect #2 (the cable) is marked")
    check(len(td.items["mark-suspect"]) == 2, "fabric-8: two suspect badges (%d)" % len(td.items["mark-suspect"]))
    check([x.get("data-suspect") for x in td.items["suspect"]] == ["1", "2"], "fabric-8: both suspects listed with evidence")
    check(len(td.items["fabric-link"]) == 3, "fabric-8: the three problem cables listed (%d)" % len(td.items["fabric-link"]))
    # The heat map in leaf order: its row labels (the first half of the node labels) go leaf by leaf.
    rows = [int(x["data-ranks"]) for x in td.items["node-label"]][: n8 * 2: 2]
    check(rows == [r for leaf in range(4) for r in range(n8) if r % 4 == leaf], "fabric-8: heat map rows by leaf: %s" % rows)
    check(len(td.items["leaf-bound"]) == 3 and len(td.items["leaf-label"]) == 4, "fabric-8: leaf bounds and names drawn")
    check(not [x for x in td.items["link"] if "title" in x and not x["title"]], "fabric-8: every cable has a hover text")

    # 96 switches: bench/fattree-topology.py's fabric (64 leaves of 32 HCAs, 32 spines).
    fab96, hosts96, leaf96, spine96 = synth_fabric(64, 32, 32, degraded={(5, 7), (40, 2)}, not_active={(63, 31)},
                                                   errors={(10, 10): 5})
    fab96_json = os.path.join(outdir, "synthetic-fabric-96.json")
    json.dump(fab96, open(fab96_json, "w"))
    page, td = render_topology([fab96_json], "fabric-96")
    check("fabric" in td.sections, "fabric-96: fabric section present")
    check(len(td.svgs) == 1 and td.svgs[0].get("data-view") == "tiers", "fabric-96: aggregated per tier")
    check(len(td.items["switch"]) == 0 and len(td.items["tier"]) == 3, "fabric-96: 3 tier boxes, no switch box")
    tl = {x.get("data-tiers"): x for x in td.items["link"] if x.get("data-tiers")}
    up = tl.get("1-2", {})
    check(up.get("data-links") == "2048" and up.get("data-degraded") == "2" and up.get("data-not-active") == "1"
          and up.get("data-errors") == "1", "fabric-96: leaf-spine cables summarized: %s" % {k: v for k, v in up.items() if k.startswith("data")})
    check(tl.get("0-1", {}).get("data-links") == "2048", "fabric-96: 2,048 host cables summarized")
    check(len(td.items["fabric-link"]) == 4, "fabric-96: the four problem cables listed (%d)" % len(td.items["fabric-link"]))
    check(os.path.getsize(page) < 1 << 20, "fabric-96: the report is %d bytes (under 1 MiB)" % os.path.getsize(page))
    os.remove(fab96_json)

if want("mesh"):
    # The probe mesh: SYNTHETIC /metrics of four nodes in the exporter's layout, written here: mesh-n3
    # is slow both ways (1-2 ms, above tcp's 1 ms bound), mesh-n1 -> mesh-n2 loses 3 of 1003 probes.
    RTT_BOUNDS = ["1e-06", "2e-06", "3e-06", "4e-06", "5e-06", "6e-06", "8e-06", "1e-05", "1.2e-05", "1.5e-05", "2e-05",
                  "2.5e-05", "3e-05", "4e-05", "5e-05", "6e-05", "8e-05", "0.0001", "0.00015", "0.0002", "0.0003", "0.0005",
                  "0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1"]


    def mesh_text(node, nodes, slow, lossy):
        out = ["# HELP fabscope_mesh_rtt_seconds Round-trip time of answered probes to the peer.",
               "# TYPE fabscope_mesh_rtt_seconds histogram"]
        for peer in nodes:
            if peer == node:
                continue
            l = 'peer="%s",transport="tcp"' % peer
            le = "0.002" if slow in (node, peer) else "4e-05"
            lost = 3 if (node, peer) == lossy else 0
            cum = 0
            for b in RTT_BOUNDS:
                cum = 1000 if b == le else cum
                out.append('fabscope_mesh_rtt_seconds_bucket{%s,le="%s"} %d' % (l, b, cum))
            out += ['fabscope_mesh_rtt_seconds_bucket{%s,le="+Inf"} 1000' % l,
                    "fabscope_mesh_rtt_seconds_sum{%s} 0.04" % l, "fabscope_mesh_rtt_seconds_count{%s} 1000" % l,
                    "fabscope_mesh_probes_sent_total{%s} %d" % (l, 1000 + lost),
                    "fabscope_mesh_probes_answered_total{%s} 1000" % l]
            out += ['fabscope_mesh_probe_errors_total{%s,reason="%s"} %d' % (l, r, lost if r == "timeout" else 0)
                    for r in ("timeout", "connect", "refused", "closed", "bad_reply")]
            out.append("fabscope_mesh_peer_up{%s} 1" % l)
        out.append('fabscope_mesh_peers{state="listed"} %d' % (len(nodes) - 1))
        out.append('fabscope_build_info{version="0.1.0"} 1')
        return "\n".join(out) + "\n"


    mesh_nodes = ["mesh-n%d" % i for i in range(4)]
    mesh_files = []
    for n in mesh_nodes:
        path = os.path.join(outdir, n + ".prom")
        open(path, "w").write(mesh_text(n, mesh_nodes, "mesh-n3", ("mesh-n1", "mesh-n2")))
        mesh_files += ["--mesh", path]
    page, mdom = render_and_load(mesh_files, "mesh-4")
    check("mesh" in mdom.sections, "mesh-4: section mesh present")
    check(len(mdom.cells) == 2 * 12, "mesh-4: 12 cells in each of the two maps (%d)" % len(mdom.cells))
    check(mdom.untitled == 0, "mesh-4: every cell has a hover <title> (%d without)" % mdom.untitled)
    for c in mdom.cells:
        slow = "mesh-n3" in (c.get("data-from"), c.get("data-to"))
        lossy = (c.get("data-from"), c.get("data-to")) == ("mesh-n1", "mesh-n2")
        marks = (c.get("data-mark") or "").split()
        check(("slow" in marks) == slow and ("lossy" in marks) == lossy,
              "mesh-4: cell %s -> %s marked %s" % (c.get("data-from"), c.get("data-to"), marks))
    dom_text = open(os.path.join(outdir, "mesh-4.dom.html")).read()
    titles = re.findall(r'<rect class="cell"[^>]*data-from="mesh-n1" data-to="mesh-n2"[^>]*><title>([^<]*)</title>', dom_text)
    check(len(titles) == 2 and all("(tcp)" in t and "p99" in t and "1000 answered probes" in t and "3 lost of 1003" in t
                                   for t in titles), "mesh-4: the lossy cell's hover gives transport, p99, counts, loss: %s" % titles[:1])
    check(dom_text.count('class="mesh-pair"') >= 7, "mesh-4: the slowest and lossiest pairs are listed")
    not_metrics = os.path.join(outdir, "not-metrics.prom")
    open(not_metrics, "w").write("fabscope_mesh_peer_up 1\n<html>\n")
    r = run([fabscope, "report", "--mesh", not_metrics, "-o", os.path.join(outdir, "never.html")])
    check(r.returncode == 3 and not_metrics + ":2:" in r.stderr, "a mesh file that is not exposition text exits 3 naming its line")
    for f in mesh_files[1::2] + [not_metrics]:
        os.remove(f)

if want("job"):
    # A running job: SYNTHETIC /metrics of two nodes in the exporter's layout (tests/fixtures/job-synthetic):
    # rank 5 of the 8-rank world comm at 60% busbw from 1 MiB, ranks 8-11 of the 12-rank "pp" comm on a
    # node not given, rank 2 of it stuck 95 s; a one-rank job pid-31337 on gpu-b.
    job_dir = os.path.join(source, "tests/fixtures/job-synthetic")
    job_args = []
    for n in ("gpu-a", "gpu-b"):
        job_args += ["--job", os.path.join(job_dir, n + ".prom")]
    page, jdom = render_and_load(job_args, "job-2")
    check("job" in jdom.sections, "job-2: section job present")
    job_text = open(os.path.join(outdir, "job-2.dom.html")).read()
    job_plots = sorted({k[0] for k in jdom.series if k[0] and k[0].startswith("plot-job-")})
    check(len(job_plots) == 4, "job-2: one plot per (comm, op) with a busbw: %s" % job_plots)
    world = [k for k in jdom.series if k[0] == "plot-job-1-2-AllReduce"]
    check(len(world) == 8 and all(jdom.series[k]["points"] == 10 == jdom.series[k]["declared"] for k in world),
          "job-2: the world comm's AllReduce has 8 rank lines of 10 sizes each (zero bytes left out)")
    check(jdom.untitled == 0, "job-2: every point has a hover <title> (%d without)" % jdom.untitled)
    below_rows = re.findall(r'<tr class="job-rank has-below" data-rank="(\d+)" data-below="(\d+)">', job_text)
    check(below_rows == [("5", "3"), ("5", "5")], "job-2: only rank 5's rows are marked (AllGather 3, AllReduce 5): %s" % below_rows)
    check(job_text.count('<td class="num below"') == 8, "job-2: 8 busbw cells marked below the median")
    check('data-missing="8-11"' in job_text, "job-2: ranks 8-11 of the pp comm listed as missing")
    first_net = re.search(r'<tr class="job-net" data-rank="(\d+)" data-peer="(\d+)" data-direction="(\w+)"', job_text)
    check(first_net and first_net.groups() == ("6", "5", "recv"), "job-2: the most network wait: rank 6 receiving from 5")
    check(re.search(r'<div class="job" id="job-2" data-job="pid-31337">', job_text) is not None,
          "job-2: the second job is a subsection of its own")
    not_job = os.path.join(outdir, "not-job.prom")
    open(not_job, "w").write('fabscope_job_operations_in_flight{job_id="j",comm="0a",rank="0"} 0\nfabscope_job_x{a="1} 1\n')
    r = run([fabscope, "report", "--job", not_job, "-o", os.path.join(outdir, "never.html")])
    check(r.returncode == 3 and not_job + ":2:" in r.stderr, "a job file that is not exposition text exits 3 naming its line")
    mesh_only = os.path.join(source, "tests/fixtures/mesh-loopback/node1.prom")
    r = run([fabscope, "report", "--job", mesh_only, "-o", os.path.join(outdir, "never.html")])
    check(r.returncode == 3 and "no fabscope_job_* series" in r.stderr, "a file without job series exits 3 saying so")
    os.remove(not_job)

if want("inputs"):
    # A finding's "docs" comes from the input file: as Chromium parses the page, every link goes to a
    # section of the page or to a relative docs path; a script, data or external URL is text.
    class Links(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.hrefs = []

        def handle_starttag(self, tag, attrs):
            for k, v in attrs:
                if k in ("href", "src", "action", "formaction", "xlink:href"):
                    self.hrefs.append((tag, k, v or ""))


    hostile = json.load(open(check_ib))
    schemes = ["javascript:alert(document.domain)", "data:text/html,<b>x</b>", "vbscript:msgbox(1)",
               "https://example.invalid/x", "//example.invalid/x", "docs/checks.md#x\" onclick=\"alert(1)"]
    for i, f in enumerate(hostile["findings"][: len(schemes)]):
        f["docs"] = schemes[i]
    hostile_json = os.path.join(outdir, "hostile-docs.json")
    json.dump(hostile, open(hostile_json, "w"))
    for docs_url in (None, "https://docs.example.invalid/fabscope/"):
        page = os.path.join(outdir, "hostile-docs.html")
        r = run([fabscope, "report", hostile_json, "-o", page] + (["--docs-url", docs_url] if docs_url else []))
        check(r.returncode == 0, "report of findings with hostile docs strings (--docs-url %s)" % docs_url)
        r, errors = chrome("file://" + os.path.abspath(page), "--dump-dom")
        links = Links()
        links.feed(r.stdout)
        def to_docs(h):
            if docs_url:
                return h.startswith(docs_url + "docs/") and ":" not in h[len(docs_url):]
            # The default: absolute (the installed docs, or the build's FABSCOPE_DOCS_URL), so a moved
            # file keeps its links.
            m = re.match(r"(?:file:///|https?://)[-A-Za-z0-9._~/:%@+=,]*?/(docs/.*)$", h)
            return bool(m) and ":" not in m.group(1)
        bad = [h for h in links.hrefs if not (h[2].startswith("#") or to_docs(h[2]))]
        check(links.hrefs and not bad, "every link in the DOM is to the page or the docs: %s" % bad[:3])
        check("javascript:alert(document.domain)" in r.stdout, "the javascript: docs string is shown as text")
        check(not errors, "no error in Chromium's log for the hostile-docs page: %s" % errors[:5])
    r = run([fabscope, "report", hostile_json, "-o", os.path.join(outdir, "never.html"), "--docs-url", "javascript:x//"])
    check(r.returncode == 3 and "--docs-url" in r.stderr, "a --docs-url that is not an http(s)/file URL or path exits 3")

    # Bad inputs never reach the browser: exit 3, the message names the file.
    empty = os.path.join(outdir, "empty.json")
    open(empty, "w").close()
    r = run([fabscope, "report", empty, "-o", os.path.join(outdir, "never.html")])
    check(r.returncode == 3 and empty in r.stderr and not os.path.exists(os.path.join(outdir, "never.html")),
          "an empty input exits 3 naming it")

    text = open(vm5).read()
    cut = os.path.join(outdir, "truncated-cluster.json")
    open(cut, "w").write(text[: len(text) // 2])
    r = run([fabscope, "report", cut, "-o", os.path.join(outdir, "never.html")])
    check(r.returncode == 3 and cut in r.stderr and "truncated" in r.stderr, "a truncated cluster JSON exits 3 naming it")
    newer = os.path.join(outdir, "newer-rdma.json")
    d = json.load(open(rdma_inputs[0]))
    d["schema_version"] = 99
    json.dump(d, open(newer, "w"))
    r = run([fabscope, "report", newer, "-o", os.path.join(outdir, "never.html")])
    check(r.returncode == 3 and newer in r.stderr and "schema_version 99" in r.stderr,
          "an rdma JSON of a newer schema exits 3 naming it")
    check(not os.path.exists(os.path.join(outdir, "never.html")), "no report is written from a bad input")

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
