#!/usr/bin/env python3
"""Compares the subnet driver's facts (tests/support/fabric_driver.cpp) with rdma-core's diag
tools run on the same simulated fabric. Parsing the tools' text is for tests only.

  compare.py inventory DRIVER IBNETDISCOVER IBNETDISCOVER_P
  compare.py linkinfo  DRIVER IBLINKINFO_L
  compare.py errors    DRIVER IBQUERYERRORS
  compare.py route     DRIVER_ROUTE IBTRACERT      (one route each)
  compare.py lfts      FABRIC_JSON IBROUTE...      (a saved sweep; one ibroute output per switch)
  compare.py sms       DRIVER SMINFO...            (one sminfo output per SM LID)
Prints what differs and exits 1, or prints OK and a count of what was compared.
"""
import re
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def same(what, ours, theirs):
    if ours != theirs:
        only_ours = sorted(ours - theirs) if isinstance(ours, set) else ours
        only_theirs = sorted(theirs - ours) if isinstance(theirs, set) else theirs
        fail(f"{what} differ\n  fabscope only: {only_ours}\n  tool only:     {only_theirs}")
    print(f"OK {what}: {len(ours)} equal")


def driver(path):
    d = {"node": {}, "port": {}, "link": set(), "counter": {}, "sm": [], "hop": [], "lines": []}
    for line in open(path):
        line = line.rstrip("\n")
        d["lines"].append(line)
        f = line.split()
        if not f:
            continue
        if f[0] == "node":
            desc = re.search(r'"(.*)"', line).group(1)
            d["node"][int(f[1], 16)] = {"type": f[2], "lid": int(f[3]), "desc": desc}
        elif f[0] == "port":
            d["port"][(int(f[1], 16), int(f[2]))] = {
                "guid": int(f[3], 16), "state": f[4], "phys": f[5], "width": f[6], "speed": f[7],
                "wen": f[8], "wsup": f[9], "sen": f[10], "ssup": f[11]}
        elif f[0] == "link":
            d["link"].add(frozenset([(int(f[1], 16), int(f[2])), (int(f[3], 16), int(f[4]))]))
        elif f[0] == "counter":
            d["counter"][(int(f[1], 16), int(f[2]), f[3])] = int(f[4])
        elif f[0] == "sm":
            d["sm"].append((int(f[1], 16), int(f[2]), int(f[3]), f[4]))
        elif f[0] == "hop":
            d["hop"].append((int(f[1], 16), int(f[2]), int(f[3]), re.search(r'"(.*)"', line).group(1)))
    return d


def inventory(drv, ibnd, ibnd_p):
    d = driver(drv)
    nodes, lids = {}, {}
    cur = None
    for line in open(ibnd):
        m = re.match(r'^(Switch|Ca|Rt)\s+(\d+)\s+"[SHR]-([0-9a-f]+)"\s+#\s+"(.*?)"(.*)$', line)
        if m:
            kind = {"Switch": "switch", "Ca": "hca", "Rt": "router"}[m.group(1)]
            cur = int(m.group(3), 16)
            nodes[cur] = (kind, m.group(4), int(m.group(2)))
            lm = re.search(r"\blid (\d+)", m.group(5))
            if lm:
                lids[cur] = int(lm.group(1))
            continue
        m = re.match(r'^\[(\d+)\](?:\(([0-9a-f]+)\))?\s+"[SHR]-[0-9a-f]+"\[\d+\].*#\s*lid (\d+)', line)
        if m and cur is not None and nodes[cur][0] != "switch" and cur not in lids:
            lids[cur] = int(m.group(3))
    ours = {g: (n["type"], n["desc"]) for g, n in d["node"].items()}
    same("nodes (GUID, type, description)", set(ours.items()), {(g, (t, desc)) for g, (t, desc, _) in nodes.items()})
    same("LIDs", {(g, n["lid"]) for g, n in d["node"].items()}, set(lids.items()))
    # ibnetdiscover -p: one line per port, port GUIDs; both ends of every link.
    port_node = {p["guid"]: g for (g, _), p in d["port"].items()}
    links, widths = set(), {}
    for line in open(ibnd_p):
        m = re.match(r"^(SW|CA|RT)\s+\d+\s+(\d+)\s+(0x[0-9a-f]+)\s+(\d+x)\s+(\S+)\s+-\s+(SW|CA|RT)\s+\d+\s+(\d+)\s+(0x[0-9a-f]+)", line)
        if not m:
            continue
        a = (port_node.get(int(m.group(3), 16), -1), int(m.group(2)))
        b = (port_node.get(int(m.group(8), 16), -1), int(m.group(7)))
        links.add(frozenset([a, b]))
        widths[a] = (m.group(4), m.group(5))
    same("links (both ends: node GUID, port)", d["link"], links)
    ours_w = {k: (p["width"], p["speed"]) for k, p in d["port"].items() if k in widths}
    same("active width and speed per linked port", set(ours_w.items()), set(widths.items()))


WIDTH_LANES = {"1x": 1, "2x": 2, "4x": 4, "8x": 8, "12x": 12}
SPEED_ORDER = ["SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR"]
GBPS = {"2.5": "SDR", "5.0": "DDR", "10.0": "QDR", "14.0625": "FDR", "25.78125": "EDR", "53.125": "HDR",
        "106.25": "NDR"}


def linkinfo(drv, iblink):
    d = driver(drv)
    port_node = {p["guid"]: g for (g, _), p in d["port"].items()}  # iblinkinfo names HCAs by port GUID
    theirs_below, theirs_active = set(), set()
    for line in open(iblink):
        m = re.match(r'^(0x[0-9a-f]+)\s+".*?"\s+\d+\s+(\d+)\[.*?\]\s+==\(\s*(\d+)X\s+([\d.]+) Gbps Active', line)
        if not m:
            continue
        key = (port_node.get(int(m.group(1), 16), -1), int(m.group(2)))
        theirs_active.add((key, f"{m.group(3)}x", GBPS[m.group(4)]))
        if "Could be" in line:
            theirs_below.add(key)
    ours_below, ours_active = set(), set()
    for link in d["link"]:
        a, b = sorted(link)
        for x, y in ((a, b), (b, a)):
            p, q = d["port"][x], d["port"][y]
            if p["state"] != "Active":
                continue
            ours_active.add((x, p["width"], p["speed"]))
            # What both ends support: the widest width and fastest speed the link could train at.
            common_w = set(p["wsup"].split(",")) & set(q["wsup"].split(","))
            common_s = set(p["ssup"].split(",")) & set(q["ssup"].split(","))
            best_w = max((WIDTH_LANES[w] for w in common_w if w in WIDTH_LANES), default=0)
            best_s = max((SPEED_ORDER.index(s) for s in common_s if s in SPEED_ORDER), default=-1)
            if WIDTH_LANES.get(p["width"], 0) < best_w or SPEED_ORDER.index(p["speed"]) < best_s:
                ours_below.add(x)
    same("ports below what both ends support (iblinkinfo's \"Could be\")", ours_below, theirs_below)
    same("active width and speed per port (iblinkinfo)", ours_active, theirs_active)


def errors(drv, ibqe):
    d = driver(drv)
    port_node = {p["guid"]: g for (g, _), p in d["port"].items()}
    error_names = {"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
                   "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
                   "PortXmitConstraintErrors", "PortRcvConstraintErrors", "LocalLinkIntegrityErrors",
                   "ExcessiveBufferOverrunErrors", "VL15Dropped"}
    ours = {(g, p, c, v) for (g, p, c), v in d["counter"].items() if c in error_names and v > 0}
    theirs = set()
    for line in open(ibqe):
        m = re.match(r"^\s+GUID (0x[0-9a-f]+) port (\d+): (.*)$", line)
        if not m:
            continue
        for name, val in re.findall(r"\[(\w+) == (\d+)\]", m.group(3)):
            theirs.add((port_node.get(int(m.group(1), 16), -1), int(m.group(2)), name, int(val)))
    if not theirs:
        fail("ibqueryerrors reported no error: the test set none?")
    same("error counters above zero (ibqueryerrors)", ours, theirs)


def route(drv, tracert):
    d = driver(drv)
    ours = [(h[3], h[1], h[2]) for h in d["hop"]]
    theirs = []
    lines = open(tracert).read().splitlines()
    m = re.match(r'^From \w+ \{0x[0-9a-f]+\} portnum (\d+) lid [\d-]+ "(.*)"', lines[0]) if lines else None
    if not m:
        fail("ibtracert output has no From line: " + repr(lines[:2]))
    src = m.group(2)
    hops = []
    for line in lines[1:]:
        h = re.match(r'^\[(\d+)\] -> \w+ port \{0x[0-9a-f]+\}\[(\d+)\] lid [\d-]+ "(.*)"', line)
        if h:
            hops.append((int(h.group(1)), h.group(3), int(h.group(2))))
    # (node, in, out) as fabscope's Hop: the source leaves by the first hop's port.
    node, in_port = src, 0
    for out, nxt, nxt_in in hops:
        theirs.append((node, in_port, out))
        node, in_port = nxt, nxt_in
    theirs.append((node, in_port, 0))
    if ours != theirs:
        fail(f"route differs\n  fabscope: {ours}\n  ibtracert: {theirs}")
    print(f"OK route of {len(ours)} hops: {' -> '.join(n for n, _, _ in ours)}")


def lfts(saved, *ibroutes):
    """Every switch's saved forwarding table ("lft", two hex digits per LID) against ibroute's
    dump of the same switch: the LIDs with an entry (ibroute leaves out 0xff) and their ports."""
    import json
    ours, theirs, switches = set(), set(), set()
    for n in json.load(open(saved))["nodes"]:
        if n["type"] != "switch":
            continue
        g = int(n["guid"], 16)
        if "lft" not in n:
            fail(f"switch {n['description']} has no saved lft")
        t = bytes.fromhex(n["lft"])
        ours |= {(g, lid, port) for lid, port in enumerate(t) if port != 0xff}
    for path in ibroutes:
        g = None
        for line in open(path):
            m = re.search(r"guid (0x[0-9a-f]+)", line)
            if m and line.startswith("Unicast lids"):
                g = int(m.group(1), 16)
                switches.add(g)
                continue
            m = re.match(r"^0x([0-9a-f]+) (\d+) :", line)
            if m and g is not None:
                theirs.add((g, int(m.group(1), 16), int(m.group(2))))
    if not theirs:
        fail("ibroute dumped no entry")
    same(f"forwarding entries of {len(switches)} switches (ibroute)", {e for e in ours if e[0] in switches}, theirs)


def sms(drv, *sminfos):
    d = driver(drv)
    theirs = set()
    for path in sminfos:
        for line in open(path):
            m = re.match(r"^sminfo: sm lid (\d+) sm guid (0x[0-9a-f]+), activity count \d+ priority (\d+) state (\d+)", line)
            if m:
                state = {0: "NOTACTIVE", 1: "DISCOVERING", 2: "STANDBY", 3: "MASTER"}[int(m.group(4))]
                theirs.add((int(m.group(2), 16), int(m.group(1)), int(m.group(3)), state))
    same("subnet managers (GUID, LID, priority, state)", set(d["sm"]), theirs)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(3)
    cmd, args = sys.argv[1], sys.argv[2:]
    {"inventory": inventory, "linkinfo": linkinfo, "errors": errors, "route": route, "lfts": lfts,
     "sms": sms}[cmd](*args)


if __name__ == "__main__":
    main()
