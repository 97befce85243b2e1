#!/usr/bin/env python3
"""Host side of the soft-RoCE VM test.

  assert.py unpack RESULTS_B64 DIR   decode the tarball the VM wrote to its second serial port
  assert.py check DIR                judge the scenario's records; exit 1 on any failed assertion
  assert.py capture DIR DEST         copy the VM's captured sysfs/procfs tree into a fixture folder

The VM only records (tests/vm/scenario.sh); every judgement lives here, so a failure names the
file and the values that disagree.
"""
import base64
import io
import ipaddress
import json
import os
import re
import sys
import tarfile

BEGIN, END = "FABSCOPE-RESULTS-BEGIN", "FABSCOPE-RESULTS-END"


def unpack(b64_path, dest):
    try:
        text = open(b64_path, "rb").read().decode("ascii", errors="replace")
    except OSError as e:
        print(f"assert.py: {b64_path}: {e.strerror}", file=sys.stderr)
        return 1
    if BEGIN not in text or END not in text:
        print(f"assert.py: {b64_path}: no {BEGIN}..{END} block ({len(text)} bytes)", file=sys.stderr)
        return 1
    body = text.split(BEGIN, 1)[1].split(END, 1)[0]
    data = base64.b64decode(re.sub(r"[^A-Za-z0-9+/=]", "", body))
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(dest)
    return 0


class Checker:
    def __init__(self, root):
        self.root = root
        self.passed, self.failed, self.skipped = [], [], []

    def path(self, rel):
        return os.path.join(self.root, rel)

    def exists(self, rel):
        return os.path.exists(self.path(rel))

    def text(self, rel):
        with open(self.path(rel), encoding="utf-8", errors="replace") as f:
            return f.read()

    def rc(self, rel):
        """Exit status recorded for a command (rel without extension), None when it did not run."""
        p = self.path(rel + ".rc")
        return int(open(p).read().strip()) if os.path.exists(p) else None

    def json(self, rel):
        try:
            return json.loads(self.text(rel))
        except (OSError, ValueError) as e:
            self.fail(f"{rel}: not readable JSON ({e})")
            return None

    def ok(self, cond, what, evidence=""):
        (self.passed if cond else self.failed).append(what if cond else f"{what} -- {evidence}")
        return cond

    def fail(self, what):
        self.failed.append(what)

    def skip(self, what, why):
        self.skipped.append(f"{what}: {why}")


def kv_file(c, rel):
    """'dev field value...' lines -> {(dev, field): value}"""
    out = {}
    for line in c.text(rel).splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3:
            out[(parts[0], parts[1])] = parts[2]
    return out


def rdma_links(c, phase):
    """`rdma -j link show` -> {(ifname, port): entry}"""
    data = c.json(f"phases/{phase}/rdma-link-json.out") or []
    return {(e.get("ifname"), e.get("port")): e for e in data}


def ibv_devinfo(c, phase):
    """`ibv_devinfo -v` -> {device: {port: {field: value}, None: device fields}}"""
    devs, dev, port = {}, None, None
    for line in c.text(f"phases/{phase}/ibv_devinfo.out").splitlines():
        m = re.match(r"hca_id:\s*(\S+)", line)
        if m:
            dev, port = m.group(1), None
            devs[dev] = {None: {}}
            continue
        m = re.match(r"\s*port:\s*(\d+)", line)
        if m and dev:
            port = int(m.group(1))
            devs[dev][port] = {}
            continue
        m = re.match(r"\s*([A-Za-z_ ]+?):\s*(.*)$", line)
        if m and dev:
            key, val = m.group(1).strip(), m.group(2).strip()
            devs[dev][port if port is not None else None].setdefault(key, val)
        m = re.match(r"\s*GID\[\s*(\d+)\]:\s*([^,\s]+)(?:,\s*(.*))?", line)
        if m and dev and port is not None:
            devs[dev][port].setdefault("gids", {})[int(m.group(1))] = (m.group(2), (m.group(3) or "").strip())
    return devs


RXE = {"rxe0": "veth0", "rxe1": "veth1"}
SEV = {"ok": 0, "info": 1, "warn": 2, "fail": 3}


def gid_bytes(text):
    try:
        return ipaddress.IPv6Address(text.strip()).packed
    except ValueError:
        return None


def first_int(text):
    m = re.match(r"\s*(\d+)", text or "")
    return int(m.group(1)) if m else None


def gid_index(c):
    """The RoCE v2 IPv4 GID index the scenario found in sysfs: {dev: index}"""
    out = {}
    for line in c.text("gid-index.txt").splitlines():
        dev, _, idx = line.partition(" ")
        if idx.strip():
            out[dev] = int(idx)
    return out


def check_basics(c):
    for dev in RXE:
        n = f"net/rdma-link-add-{dev}"
        c.ok(c.rc(n) == 0, f"rdma link add {dev} type rxe succeeded",
             c.text(n + ".err").strip() if c.exists(n + ".err") else "not run")
    links = rdma_links(c, "mtu1500")
    for dev, netdev in RXE.items():
        e = links.get((dev, 1), {})
        c.ok(e.get("state") == "ACTIVE" and e.get("physical_state") == "LINK_UP",
             f"rdma link: {dev}/1 ACTIVE LINK_UP", f"got {e}")
        c.ok(e.get("netdev") == netdev, f"rdma link: {dev} carries {netdev}", f"got {e}")


def probe_port(c, phase, dev):
    probe = c.json(f"phases/{phase}/probe.out")
    if probe is None:
        return None, None
    for d in probe.get("rdma_devices", []):
        if d.get("name") == dev:
            for p in d.get("ports", []):
                if p.get("port") == 1:
                    return probe, p
    c.fail(f"probe {phase}: no {dev} port 1 in rdma_devices "
           f"({[d.get('name') for d in probe.get('rdma_devices', [])]})")
    return probe, None


def check_probe(c):
    if not c.exists("phases/mtu1500/probe.rc"):
        c.skip("probe vs ibv_devinfo/rdma link", "fabscope probe not in this build")
        return
    gidx = gid_index(c)
    for phase, mtu, ib_mtu in (("mtu1500", 1500, 1024), ("mtu9000", 9000, 4096)):
        c.ok(c.rc(f"phases/{phase}/probe") == 0, f"probe {phase}: fabscope probe --json exits 0",
             f"rc={c.rc(f'phases/{phase}/probe')} {c.text(f'phases/{phase}/probe.err')[:300]}")
        ibv = ibv_devinfo(c, phase)
        links = rdma_links(c, phase)
        for dev, netdev in RXE.items():
            probe, port = probe_port(c, phase, dev)
            if port is None:
                continue
            iport = ibv.get(dev, {}).get(1, {})
            link = links.get((dev, 1), {})
            where = f"probe {phase} {dev}:1"
            c.ok(port.get("state") == "ACTIVE" and iport.get("state", "").startswith("PORT_ACTIVE"),
                 f"{where}: ACTIVE, as ibv_devinfo says", f"probe {port.get('state')!r}, ibv {iport.get('state')!r}")
            c.ok(port.get("phys_state") == "LinkUp" and link.get("physical_state") == "LINK_UP",
                 f"{where}: LinkUp, as rdma link says",
                 f"probe {port.get('phys_state')!r}, rdma link {link.get('physical_state')!r}")
            c.ok(port.get("link_layer") == "Ethernet" == iport.get("link_layer"),
                 f"{where}: link layer Ethernet (RoCE)", f"probe {port.get('link_layer')!r}, ibv {iport.get('link_layer')!r}")
            c.ok(port.get("netdev") == netdev == link.get("netdev"), f"{where}: netdev {netdev}, as rdma link says",
                 f"probe {port.get('netdev')!r}, rdma link {link.get('netdev')!r}")
            c.ok(port.get("active_mtu") == ib_mtu == first_int(iport.get("active_mtu")),
                 f"{where}: active MTU {ib_mtu} on a {mtu}-byte netdev, as ibv_devinfo says",
                 f"probe {port.get('active_mtu')!r}, ibv {iport.get('active_mtu')!r}")
            want = gidx.get(dev)
            v2 = [g for g in port.get("gids", []) if g.get("type") == "RoCE v2" and g.get("ipv4_mapped")]
            c.ok([g.get("index") for g in v2] == [want], f"{where}: one RoCE v2 IPv4 GID, index {want} as in sysfs",
                 f"probe lists {[(g.get('index'), g.get('gid')) for g in v2]}")
            igids = iport.get("gids", {})
            for g in port.get("gids", []):
                ig = igids.get(g.get("index"))
                c.ok(ig is not None and gid_bytes(ig[0]) == gid_bytes(g.get("gid", "")) and ig[1] == g.get("type"),
                     f"{where}: GID[{g.get('index')}] {g.get('type')} agrees with ibv_devinfo",
                     f"probe {g.get('gid')!r} {g.get('type')!r}, ibv {ig}")
            c.ok(len(port.get("gids", [])) == len(igids), f"{where}: as many GIDs as ibv_devinfo lists",
                 f"probe {len(port.get('gids', []))}, ibv {len(igids)}")
            nd = next((n for n in probe.get("netdevs", []) if n.get("name") == netdev), {})
            c.ok(nd.get("mtu") == mtu, f"probe {phase}: {netdev} MTU {mtu}", f"got {nd.get('mtu')!r}")
            addr = "10.9.0.1" if netdev == "veth0" else "10.9.0.2"
            c.ok(any(a.split("/")[0] == addr for a in nd.get("ipv4", [])), f"probe {phase}: {netdev} has {addr} (live)",
                 f"ipv4 {nd.get('ipv4')!r}")
            d = next(d for d in probe["rdma_devices"] if d.get("name") == dev)
            ibd = ibv.get(dev, {}).get(None, {})
            # rxe leaves sysfs fw_ver empty; rdma-core prints the zero firmware version as 0.0.0.
            c.ok(d.get("node_guid") == ibd.get("node_guid"), f"probe {phase} {dev}: node_guid as ibv_devinfo says",
                 f"probe {d.get('node_guid')!r}, ibv {ibd.get('node_guid')!r}")
            check_verbs_section(c, probe, phase, dev, port, iport, ibd)
    probe = c.json("phases/mtu9000/probe.out") or {}
    mods = probe.get("kernel", {}).get("modules", [])
    c.ok("rdma_rxe" in mods and "ib_uverbs" in mods, "probe: kernel modules list rdma_rxe and ib_uverbs",
         f"modules {mods}")
    if c.exists("phases/mtu9000/probe-text.out"):
        wide = [l for l in c.text("phases/mtu9000/probe-text.out").splitlines() if len(l) > 100]
        c.ok(c.rc("phases/mtu9000/probe-text") == 0 and not wide, "probe: human output exits 0 and fits 100 columns",
             f"rc={c.rc('phases/mtu9000/probe-text')}, wide lines {wide[:2]}")
    for dev in RXE:
        _, port = probe_port(c, "link-down", dev)
        if port is not None:
            c.ok(port.get("state") == "DOWN", f"probe link-down {dev}:1: DOWN", f"got {port.get('state')!r}")
        probe = c.json("phases/link-down/probe.out") or {}
        vd = next((d for d in (probe.get("verbs") or {}).get("devices", []) if d.get("name") == dev), {})
        vp = next((p for p in vd.get("ports", []) if p.get("port") == 1), {})
        c.ok(vp.get("state") == "DOWN" and port is not None and vp.get("phys_state") == port.get("phys_state"),
             f"probe link-down verbs {dev}:1: DOWN, phys_state as sysfs",
             f"verbs {vp.get('state')!r}/{vp.get('phys_state')!r}, sysfs {port and port.get('phys_state')!r}")


def check_verbs_section(c, probe, phase, dev, port, iport, ibd):
    """The live verbs collector's view of dev beside ibv_devinfo (same library) and sysfs."""
    verbs = probe.get("verbs")
    where = f"probe {phase} verbs {dev}:1"
    if not c.ok(isinstance(verbs, dict) and verbs.get("available"), f"probe {phase}: verbs collector available",
                f"verbs={verbs!r:.200}"):
        return
    vd = next((d for d in verbs.get("devices", []) if d.get("name") == dev), None)
    if not c.ok(vd is not None and not vd.get("error"), f"probe {phase}: verbs lists {dev}", f"got {vd!r:.200}"):
        return
    c.ok(vd.get("node_guid") == ibd.get("node_guid") and vd.get("fw_ver") == ibd.get("fw_ver"),
         f"{where}: node_guid and fw_ver as ibv_devinfo says",
         f"verbs {vd.get('node_guid')!r}/{vd.get('fw_ver')!r}, ibv {ibd.get('node_guid')!r}/{ibd.get('fw_ver')!r}")
    vp = next((p for p in vd.get("ports", []) if p.get("port") == 1), {})
    for key in ("state", "phys_state", "link_layer", "active_mtu", "rate_gbps"):
        c.ok(vp.get(key) == port.get(key) and vp.get(key) is not None,
             f"{where}: {key} agrees with sysfs", f"verbs {vp.get(key)!r}, sysfs {port.get(key)!r}")
    c.ok(vp.get("active_mtu") == first_int(iport.get("active_mtu")), f"{where}: active_mtu as ibv_devinfo says",
         f"verbs {vp.get('active_mtu')!r}, ibv {iport.get('active_mtu')!r}")
    vg = [(g.get("index"), g.get("gid"), g.get("type"), g.get("netdev")) for g in vp.get("gids", [])]
    sg = [(g.get("index"), g.get("gid"), g.get("type"), g.get("netdev")) for g in port.get("gids", [])]
    c.ok(vg == sg and vg, f"{where}: GID table (index, gid, type, netdev) equals sysfs's", f"verbs {vg}, sysfs {sg}")


def check_no_provider(c):
    if not c.exists("phases/no-provider/probe.rc"):
        c.skip("missing verbs provider", "fabscope probe not in this build")
        return
    probe = c.json("phases/no-provider/probe.out") or {}
    names = [d.get("name") for d in probe.get("rdma_devices", [])]
    vnames = [d.get("name") for d in (probe.get("verbs") or {}).get("devices", [])]
    c.ok("rxe0" in names and "rxe1" in names and "rxe0" not in vnames and "rxe1" not in vnames,
         "no-provider: sysfs still lists rxe0/rxe1, the verbs view does not", f"sysfs {names}, verbs {vnames}")
    ibv = c.text("phases/no-provider/ibv_devices.out")
    c.ok("rxe0" not in ibv, "no-provider: ibv_devices agrees (no rxe0)", ibv.strip()[:200])
    if c.exists("phases/no-provider/check.rc"):
        fs = findings(c.json("phases/no-provider/check.out") or {})
        hit = [f for f in fs if f.get("id") == "verbs.device_not_visible"]
        c.ok(sorted(f.get("subject") for f in hit) == ["rxe0", "rxe1"],
             "no-provider: check flags verbs.device_not_visible for rxe0 and rxe1",
             f"findings {[(f.get('id'), f.get('subject')) for f in fs]}")


def findings(doc):
    """The findings of a check/doctor document: its "findings" list (fabscope.check lists its
    registry under "checks" too, which are ids, not findings); else every dict with an 'id' and a
    'severity' anywhere in the document."""
    if isinstance(doc, dict) and isinstance(doc.get("findings"), list):
        return doc["findings"]
    found = []
    def walk(x):
        if isinstance(x, dict):
            if "id" in x and "severity" in x:
                found.append(x)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(doc)
    return found


def bad(fs, id_part, subjects):
    return [f for f in fs if id_part in f.get("id", "") and SEV.get(f.get("severity"), 0) >= 2
            and any(s in f.get("subject", "") + " " + f.get("evidence", "") for s in subjects)]


def check_check(c):
    if not c.exists("phases/mtu1500/check.rc"):
        c.skip("check findings", "fabscope check not in this build")
        return
    docs = {p: c.json(f"phases/{p}/check.out") for p in ("mtu1500", "mtu9000", "link-down")}
    if any(d is None for d in docs.values()):
        return
    subj = list(RXE) + list(RXE.values())
    f1500, f9000, fdown = (findings(docs[p]) for p in ("mtu1500", "mtu9000", "link-down"))
    c.ok(docs["mtu1500"].get("schema") and "schema_version" in docs["mtu1500"],
         "check --json carries schema and schema_version", f"keys {sorted(docs['mtu1500'])}")
    c.ok(bool(bad(f1500, "mtu", subj)), "check mtu1500: the 1500-byte veth MTU (RoCE MTU 1024) is flagged",
         f"findings {[(f.get('id'), f.get('severity'), f.get('subject')) for f in f1500]}")
    c.ok(c.rc("phases/mtu1500/check") in (1, 2), "check mtu1500: exit status 1 or 2 (warn/fail)",
         f"rc={c.rc('phases/mtu1500/check')}")
    c.ok(not bad(f9000, "mtu", subj), "check mtu9000: the MTU finding clears after raising the MTU to 9000",
         f"still {[(f.get('id'), f.get('subject')) for f in bad(f9000, 'mtu', subj)]}")
    c.ok(bool(bad(fdown, "down", ["rxe1", "veth1"])), "check link-down: rxe1's port-down is flagged",
         f"findings {[(f.get('id'), f.get('severity'), f.get('subject')) for f in fdown]}")
    c.ok(c.rc("phases/link-down/check") in (1, 2), "check link-down: exit status 1 or 2",
         f"rc={c.rc('phases/link-down/check')}")
    verbs = [f for f in f9000 if f.get("id", "").startswith("verbs.") and SEV.get(f.get("severity"), 0) >= 2]
    c.ok(not verbs, "check mtu9000: verbs and sysfs agree (no verbs.* warning)",
         f"{[(f.get('id'), f.get('evidence')) for f in verbs]}")


def env_vars(text):
    """NCCL_* assignments in any of the env formats (export X=v, X=v, "X": "v", X: v)."""
    out = {}
    body = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))  # reasons
    for m in re.finditer(r'"?(NCCL_[A-Z_]+)"?\s*[=:]\s*[\'"]?([^\'"\s,]*(?:,[^\'"\s,]+)*)[\'"]?', body):
        out.setdefault(m.group(1), m.group(2))
    return out


def check_env(c):
    if not c.exists("phases/mtu9000/env.rc"):
        c.skip("env plan", "fabscope env not in this build")
        return
    c.ok(c.rc("phases/mtu9000/env") == 0, "env mtu9000: fabscope env exits 0",
         f"rc={c.rc('phases/mtu9000/env')} {c.text('phases/mtu9000/env.err')[:300]}")
    v = env_vars(c.text("phases/mtu9000/env.out"))
    hca = v.get("NCCL_IB_HCA", "")
    c.ok("rxe0" in hca and "rxe1" in hca, "env mtu9000: NCCL_IB_HCA names rxe0 and rxe1", f"NCCL_IB_HCA={hca!r}")
    want = set(gid_index(c).values())
    c.ok(len(want) == 1 and v.get("NCCL_IB_GID_INDEX") == str(next(iter(want))),
         f"env mtu9000: NCCL_IB_GID_INDEX is the RoCE v2 IPv4 index {sorted(want)}",
         f"NCCL_IB_GID_INDEX={v.get('NCCL_IB_GID_INDEX')!r}")
    doc = c.json("phases/mtu9000/env-json.out")
    if doc is not None:
        jv = {x.get("name"): x.get("value") for x in doc.get("variables", [])}
        c.ok(all(jv.get(k) == v.get(k) for k in ("NCCL_IB_HCA", "NCCL_IB_GID_INDEX")),
             "env mtu9000: --json plans the same NCCL_IB_HCA and NCCL_IB_GID_INDEX as the shell format",
             f"json {jv.get('NCCL_IB_HCA')!r} {jv.get('NCCL_IB_GID_INDEX')!r}, shell {hca!r} "
             f"{v.get('NCCL_IB_GID_INDEX')!r}")


def perftest_result(c, name):
    """Last data row of a perftest client's table -> list of numbers."""
    rows = [l.split() for l in c.text(f"traffic/{name}.client.out").splitlines()
            if re.match(r"\s*\d+\s+\d+\s+(?:[\d.]+|inf|-?nan)\s", l)]
    return [float(x) for x in rows[-1]] if rows else None


def counters(c, phase):
    out = {}
    for (dev, name), val in kv_file(c, f"phases/{phase}/hw_counters.txt").items():
        out[(dev, name)] = int(val)
    return out


def check_traffic(c):
    if not c.exists("traffic/ib_write_bw.client.rc"):
        c.skip("traffic", "perftest did not run")
        return
    results = {}
    for name in ("ib_write_bw", "ib_read_lat", "ib_write_lat", "ib_read_bw"):
        if not c.exists(f"traffic/{name}.client.rc"):
            continue
        ok = c.rc(f"traffic/{name}.client") == 0 and c.rc(f"traffic/{name}.server") == 0
        c.ok(ok, f"traffic: {name} rxe1 -> rxe0 completed",
             f"client rc={c.rc(f'traffic/{name}.client')} server rc={c.rc(f'traffic/{name}.server')} "
             f"{c.text(f'traffic/{name}.client.err')[-300:]}")
        r = perftest_result(c, name) if ok else None
        if r:
            results[name] = r
    before, after = kv_file(c, "phases/mtu9000/netdevs.txt"), kv_file(c, "phases/after-traffic/netdevs.txt")
    moved = int(after[("veth1", "statistics/tx_bytes")]) - int(before[("veth1", "statistics/tx_bytes")])
    if "ib_write_bw" in results:
        written = int(results["ib_write_bw"][0] * results["ib_write_bw"][1])
        c.ok(moved >= written, "traffic: the RDMA writes crossed the veth pair (veth1 tx_bytes grew by at least "
             "the bytes written)", f"veth1 tx grew {moved}, written {written}")
    hb, ha = counters(c, "mtu9000"), counters(c, "after-traffic")
    for dev in RXE:
        c.ok(ha.get((dev, "sent_pkts"), 0) > hb.get((dev, "sent_pkts"), 0) and
             ha.get((dev, "rcvd_pkts"), 0) > hb.get((dev, "rcvd_pkts"), 0),
             f"traffic: {dev} hw_counters sent_pkts/rcvd_pkts moved",
             f"before {hb.get((dev, 'sent_pkts'))}/{hb.get((dev, 'rcvd_pkts'))}, "
             f"after {ha.get((dev, 'sent_pkts'))}/{ha.get((dev, 'rcvd_pkts'))}")
    if c.exists("phases/after-traffic/probe.rc"):
        for dev in RXE:
            _, pb = probe_port(c, "mtu9000", dev)
            _, pa = probe_port(c, "after-traffic", dev)
            if pb is None or pa is None:
                continue
            hwb, hwa = pb.get("hw_counters", {}), pa.get("hw_counters", {})
            c.ok(hwa.get("sent_pkts", 0) > hwb.get("sent_pkts", 0) and hwa.get("rcvd_pkts", 0) > hwb.get("rcvd_pkts", 0),
                 f"traffic: fabscope probe sees {dev}'s sent_pkts/rcvd_pkts move",
                 f"before {hwb.get('sent_pkts')}/{hwb.get('rcvd_pkts')}, after {hwa.get('sent_pkts')}/{hwa.get('rcvd_pkts')}")
            c.ok(hwa.get("sent_pkts") == ha.get((dev, "sent_pkts")),
                 f"traffic: probe's {dev} sent_pkts equals sysfs read beside it",
                 f"probe {hwa.get('sent_pkts')}, sysfs {ha.get((dev, 'sent_pkts'))}")
    else:
        c.skip("counters through fabscope probe", "fabscope probe not in this build")
    c.perf = results


def rdma_doc(c, rel):
    """A fabscope rdma --json output, None (and a failure) when it is not one."""
    doc = c.json(rel)
    if doc is not None and doc.get("schema") != "fabscope.rdma":
        c.fail(f"{rel}: schema {doc.get('schema')!r}, expected fabscope.rdma")
        return None
    return doc


def rdma_counters(c, name):
    out = {}
    for line in c.text(f"rdma/{name}.counters").splitlines():
        parts = line.split()
        if len(parts) == 3:
            out[(parts[0], parts[1])] = float(parts[2])
        elif len(parts) == 2:
            out[parts[0]] = float(parts[1])
    return out


def ids(doc):
    return [f.get("id") for f in (doc or {}).get("findings", [])]


def check_rdma(c):
    if not c.exists("rdma/fab_bw.1.client.rc"):
        c.skip("fabscope rdma", "did not run (not in this build's --help, or no RoCE v2 IPv4 GID)")
        return
    gids = dict(l.split() for l in c.text("gid-index.txt").splitlines() if len(l.split()) == 2)
    rounds = sorted(int(n.split(".")[1]) for n in os.listdir(c.path("rdma"))
                    if n.startswith("fab_bw.") and n.endswith(".client.rc"))
    c.rdma = {"bw": [], "lat": [], "pt_bw": [], "pt_lat": []}
    for name in [f"fab_bw.{i}" for i in rounds] + [f"fab_lat.{i}" for i in rounds] + ["fab_send", "fab_read", "fab_bidir"]:
        if not c.exists(f"rdma/{name}.client.rc"):
            continue
        crc, src = c.rc(f"rdma/{name}.client"), c.rc(f"rdma/{name}.server")
        if not c.ok(crc == 0 and src == 0, f"rdma {name}: client and server exit 0",
                    f"client rc={crc} server rc={src}: {c.text(f'rdma/{name}.client.out')[-600:]}"):
            continue
        cl, sv = rdma_doc(c, f"rdma/{name}.client.out"), rdma_doc(c, f"rdma/{name}.server.out")
        if cl is None or sv is None:
            continue
        c.ok(cl.get("completed") and sv.get("completed"), f"rdma {name}: both sides completed")
        ch = {x["what"]: x["value"] for x in cl.get("choices", [])}
        c.ok(ch.get("device") == "rxe1:1" and ch.get("gid_index") == gids.get("rxe1"),
             f"rdma {name}: the client chose rxe1:1 and its RoCE v2 IPv4 GID from the route to 10.9.0.1",
             f"choices {ch}, scenario's gid {gids.get('rxe1')}")
        sch = {x["what"]: x["value"] for x in sv.get("choices", [])}
        c.ok(sch.get("device") == "rxe0:1", f"rdma {name}: the server chose rxe0:1 (the address the client reached)",
             f"choices {sch}")
        cs, ss = cl.get("sizes", []), sv.get("sizes", [])
        c.ok(len(cs) == len(ss) and len(cs) == len(cl["options"]["sizes_bytes"]),
             f"rdma {name}: both sides report every size", f"client {len(cs)}, server {len(ss)}")
        bidir = cl["options"].get("bidirectional")
        for a, b in zip(cs, ss):
            # bidirectional: each side's total is both directions, its peer_total the other's share
            agree = (a["total_bytes"] == b["total_bytes"] == a["peer_total_bytes"] + b["peer_total_bytes"]) if bidir \
                else (a["total_bytes"] == b["total_bytes"] == a.get("peer_total_bytes") == b.get("peer_total_bytes"))
            c.ok(a["total_bytes"] > 0 and agree,
                 f"rdma {name} {a['bytes']} B: both sides agree on the bytes moved",
                 f"client {a['total_bytes']} (peer says {a.get('peer_total_bytes')}), server {b['total_bytes']} "
                 f"(peer says {b.get('peer_total_bytes')})")
            if cl["options"]["test"] == "bw":
                c.ok(a.get("data_verified") is True and b.get("data_verified") is True,
                     f"rdma {name} {a['bytes']} B: the receiving side found the sender's byte pattern",
                     f"client {a.get('data_verified')}, server {b.get('data_verified')}")
        k = rdma_counters(c, name)
        moved = sum(x["total_bytes"] for x in cs)
        if cl["options"]["op"] in ("write", "send") and moved and not bidir:
            tx = k[("after", "veth1_tx")] - k[("before", "veth1_tx")]
            c.ok(tx >= moved, f"rdma {name}: veth1 tx_bytes grew by at least the bytes fabscope reports",
                 f"veth1 tx grew {tx:.0f}, fabscope {moved}")
            pkts = k[("after", "rxe1_sent")] - k[("before", "rxe1_sent")]
            rcvd = k[("after", "rxe0_rcvd")] - k[("before", "rxe0_rcvd")]
            mtu = cl.get("path_mtu") or 4096
            need = sum(x["iterations"] * -(-x["bytes"] // mtu) for x in cs)
            c.ok(pkts >= need and rcvd >= need, f"rdma {name}: rxe1 sent_pkts and rxe0 rcvd_pkts grew by at least "
                 "the packets the messages need", f"sent {pkts:.0f}, rcvd {rcvd:.0f}, need {need} at MTU {mtu}")
        if name.startswith("fab_bw."):
            c.rdma["bw"].append(cs[0]["mib_per_s"])
        if name.startswith("fab_lat."):
            c.rdma["lat"].append(cs[0]["latency"]["median_us"])
    for i in rounds:
        for kind, fname, col in (("pt_bw", f"rdma/pt_bw.{i}.out", 3), ("pt_lat", f"rdma/pt_lat.{i}.out", 4)):
            if c.exists(fname):
                rows = [l.split() for l in c.text(fname).splitlines()
                        if re.match(r"\s*\d+\s+\d+\s+(?:[\d.]+|inf|-?nan)\s", l)]
                if rows:
                    c.rdma[kind].append(float(rows[-1][col]))

    # failure paths: each ends with a finding that explains it, within the timeout
    if c.exists("rdma/fab_wrong_gid.client.rc"):
        d = rdma_doc(c, "rdma/fab_wrong_gid.client.out")
        c.ok(c.rc("rdma/fab_wrong_gid.client") == 2 and d is not None and "rdma.gid_index" in ids(d)
             and any(f.get("severity") == "fail" for f in d.get("findings", [])),
             "rdma failure: -x 0 (link-local GID) fails with exit 2, rdma.gid_index and the failure it causes",
             f"rc={c.rc('rdma/fab_wrong_gid.client')} ids={ids(d)}")
        k = rdma_counters(c, "fab_wrong_gid")
        c.ok(k.get("client_s", 999) < 60, "rdma failure: the wrong GID run ended within its timeout",
             f"{k.get('client_s')} s")
    if c.exists("rdma/fab_no_server.rc"):
        d = rdma_doc(c, "rdma/fab_no_server.out")
        c.ok(c.rc("rdma/fab_no_server") == 3 and "rdma.no_server" in ids(d) and
             "18719" in c.text("rdma/fab_no_server.err"),
             "rdma failure: no server listening exits 3 with rdma.no_server naming the port",
             f"rc={c.rc('rdma/fab_no_server')} ids={ids(d)} err={c.text('rdma/fab_no_server.err')[-200:]}")
    if c.exists("rdma/fab_memlock.client.rc"):
        d = rdma_doc(c, "rdma/fab_memlock.client.out")
        c.ok(c.rc("rdma/fab_memlock.client") == 2 and "rdma.memlock" in ids(d),
             "rdma failure: ulimit -l 64 (not root) fails with exit 2 and rdma.memlock",
             f"rc={c.rc('rdma/fab_memlock.client')} ids={ids(d)} err={c.text('rdma/fab_memlock.client.err')[-300:]}")
        s = rdma_doc(c, "rdma/fab_memlock.server.out")
        c.ok(s is not None and any(f["id"] == "rdma.peer_failed" and "the client said: rdma.memlock" in f["message"]
                                   for f in s.get("findings", [])),
             "rdma failure: the server quotes the client's memlock finding (rdma.peer_failed)", f"server ids={ids(s)}")
    if c.exists("rdma/fab_down.client.rc"):
        d = rdma_doc(c, "rdma/fab_down.client.out")
        k = rdma_counters(c, "fab_down")
        fail = [f for f in (d or {}).get("findings", []) if f.get("severity") == "fail"]
        c.ok(c.rc("rdma/fab_down.client") == 2 and fail and
             fail[0]["id"] in ("rdma.completion_error", "rdma.timeout", "rdma.control_lost"),
             "rdma failure: veth1 down mid-run ends the client with exit 2 and a completion error or the watchdog",
             f"rc={c.rc('rdma/fab_down.client')} ids={ids(d)}")
        when = dict(l.split() for l in c.text("rdma/fab_down.when").splitlines()) if c.exists("rdma/fab_down.when") else {}
        down = float(when.get("down_after_s", 30))
        c.ok(any(f["id"] in ("rdma.completion_error", "rdma.timeout") and "write bw" in f["message"] for f in fail),
             "rdma failure: ... in the data phase (the link went down mid-run)", f"ids={ids(d)}")
        c.ok(k.get("client_s", 999) < down + 5 + 15,
             "rdma failure: ... within the timeout (5 s) of the link going down, not after -D 60",
             f"client ran {k.get('client_s')} s, link down after {down} s")
        c.ok(c.rc("rdma/fab_down.server") == 2, "rdma failure: the server of the port-down run exits 2",
             f"rc={c.rc('rdma/fab_down.server')}")


def metrics(c, phase):
    """Prometheus text exposition -> {(name, frozenset(labels)): value}"""
    out = {}
    for line in c.text(f"phases/{phase}/metrics.out").splitlines():
        m = re.match(r'([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$', line)
        if not m or line.startswith("#"):
            continue
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        try:
            out[(m.group(1), labels)] = float(m.group(3))
        except ValueError:
            pass
    return out


def metric(ms, name, **labels):
    """The one sample of metric `name` (a regex, matched whole) carrying all the labels given."""
    want = set(labels.items())
    vals = [v for (n, ls), v in ms.items() if re.fullmatch(name, n) and want <= set(ls)]
    return vals[0] if len(vals) == 1 else None


def check_exporter(c):
    if not c.exists("phases/mtu1500/metrics.rc"):
        c.skip("exporter scrape", "fabscope exporter not in this build (or it did not listen)")
        return
    for phase in ("mtu1500", "mtu9000", "after-traffic", "link-down"):
        c.ok(c.rc(f"phases/{phase}/metrics") == 0, f"exporter {phase}: GET /metrics answered",
             f"rc={c.rc(f'phases/{phase}/metrics')}")
    before, after, down = metrics(c, "mtu9000"), metrics(c, "after-traffic"), metrics(c, "link-down")
    hw = counters(c, "after-traffic")
    for dev in RXE:
        for ctr in ("sent_pkts", "rcvd_pkts"):
            # hw_counters/* files: one family with a counter label (its name is the exporter's to choose)
            b = metric(before, r"fabscope_port_hw_\w+_total", device=dev, port="1", counter=ctr)
            a = metric(after, r"fabscope_port_hw_\w+_total", device=dev, port="1", counter=ctr)
            c.ok(a is not None and b is not None and a > b, f"exporter: {dev} {ctr} moved with the traffic",
                 f"before {b}, after {a}")
            c.ok(a == hw.get((dev, ctr)), f"exporter: {dev} {ctr} equals the sysfs value read beside it",
                 f"exporter {a}, sysfs {hw.get((dev, ctr))}")
        st = metric(before, "fabscope_port_state", device=dev, port="1")
        c.ok(st == 4, f"exporter mtu9000: {dev} port state 4 (ACTIVE)", f"got {st}")
    st = metric(down, "fabscope_port_state", device="rxe1", port="1")
    c.ok(st == 1, "exporter link-down: rxe1 port state 1 (DOWN)", f"got {st}")
    if c.exists("exporter.rc"):
        c.ok(c.text("exporter.rc").strip() == "0", "exporter: stops with exit 0 on SIGTERM",
             f"rc={c.text('exporter.rc').strip()}")


def check_fabric(c):
    """Bond and firewall phases: each fault reported by probe, check and the exporter's check
    status, in agreement with the kernel's own files, and gone once undone."""
    if not c.exists("phases/bond-up/check.rc"):
        c.skip("fabric phases", "not run (no bond support, or fabscope check not in this build)")
        return
    docs = {p: c.json(f"phases/{p}/check.out")
            for p in ("bond-up", "bond-slave-down", "bond-restored", "nft-drop", "nft-cleared")}
    probes = {p: c.json(f"phases/{p}/probe.out") for p in ("bond-up", "bond-slave-down", "nft-drop")}
    if any(d is None for d in list(docs.values()) + list(probes.values())):
        return

    def ids(phase, prefix):
        return [(f.get("id"), f.get("severity"), f.get("subject")) for f in findings(docs[phase])
                if f.get("id", "").startswith(prefix)]

    def bond0(phase):
        return next((b for b in probes[phase].get("bonds", []) if b.get("name") == "bond0"), None)

    b = bond0("bond-up")
    c.ok(b is not None and [s.get("mii_status") for s in b.get("slaves", [])] == ["up", "up"]
         and "active-backup" in b.get("mode", ""),
         "probe bond-up: bond0, active-backup, slaves vb0a and vb1a both up", f"bond0 {b}")
    c.ok(not ids("bond-up", "bond."), "check bond-up: no bond finding", f"{ids('bond-up', 'bond.')}")
    kernel = c.text("phases/bond-slave-down/proc-net-bonding-bond0.txt")
    c.ok(re.search(r"Slave Interface: vb1a\nMII Status: down", kernel) is not None,
         "kernel bond-slave-down: /proc/net/bonding/bond0 says vb1a MII down", kernel[:200])
    b = bond0("bond-slave-down")
    slaves = {s.get("name"): s for s in (b or {}).get("slaves", [])}
    c.ok(slaves.get("vb1a", {}).get("mii_status") == "down" and slaves.get("vb0a", {}).get("mii_status") == "up",
         "probe bond-slave-down: vb1a down, vb0a up, as the kernel says", f"slaves {slaves}")
    c.ok(("bond.slave_down", "warn", "bond0") in ids("bond-slave-down", "bond."),
         "check bond-slave-down: bond.slave_down (warn) for bond0", f"{ids('bond-slave-down', 'bond.')}")
    c.ok(not ids("bond-restored", "bond."), "check bond-restored: the bond finding clears",
         f"{ids('bond-restored', 'bond.')}")
    if c.exists("phases/bond-flap/check.out"):
        flap = c.json("phases/bond-flap/check.out")
        got = [(f.get("id"), f.get("subject")) for f in findings(flap or {}) if f.get("id", "").startswith("bond.")]
        c.ok(("bond.link_failures", "bond0:vb1a") in got,
             "check --interval 4 while vb1a flaps: bond.link_failures for bond0:vb1a", f"{got}")
    rules = c.text("phases/nft-drop/nft-ruleset.json")
    c.ok('"dport"' in rules and "4791" in rules, "kernel nft-drop: the ruleset holds the udp dport 4791 rule",
         rules[:200])
    fw = probes["nft-drop"].get("firewall", {})
    c.ok(fw.get("source") == "nft", "probe nft-drop: firewall read with nft", f"firewall {str(fw)[:200]}")
    drop = [f for f in findings(docs["nft-drop"]) if f.get("id") == "firewall.roce_v2_blocked"]
    c.ok(len(drop) == 1 and drop[0].get("severity") == "warn" and "udp dport 4791" in drop[0].get("message", ""),
         "check nft-drop: firewall.roce_v2_blocked (warn: rxe is software RoCE) quoting the rule",
         f"{[(f.get('severity'), f.get('message')) for f in drop]}")
    c.ok(not ids("nft-cleared", "firewall."), "check nft-cleared: the firewall finding clears",
         f"{ids('nft-cleared', 'firewall.')}")
    unknown = [f for f in findings(docs["bond-up"]) if f.get("id") == "lossless.unknown"]
    c.ok({f.get("subject") for f in unknown} == {"veth0", "veth1"}
         and all("EOPNOTSUPP" in f.get("evidence", "") for f in unknown),
         "check: lossless state of the rxe netdevs is unknown (dcbnl EOPNOTSUPP), not ok",
         f"{[(f.get('subject'), f.get('evidence')) for f in unknown]}")
    for phase, cid, want in (("bond-slave-down", "bond.slave_down", 1), ("bond-restored", "bond.slave_down", 0),
                             ("nft-drop", "firewall.roce_v2_blocked", 1), ("nft-cleared", "firewall.roce_v2_blocked", 0)):
        if not c.exists(f"phases/{phase}/metrics.out"):
            continue
        got = metric(metrics(c, phase), "fabscope_check_status", check=cid)
        c.ok(got == want, f"exporter {phase}: fabscope_check_status{{check=\"{cid}\"}} {want}", f"got {got}")


def check_capture(c):
    if not c.exists("capture"):
        return
    for dev in RXE:
        c.ok(c.exists(f"capture/sys/class/infiniband/{dev}/ports/1/gids/0"),
             f"capture: sys/class/infiniband/{dev} with its port attributes", "missing")


ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"


def capture(results, dest):
    """Copies results/capture to dest, leaving out what cannot go into git usefully: empty files
    (attributes the kernel refused to read) and all-zero GID slots (an rxe port lists 1024;
    the probe skips all-zero entries, so dropping them changes nothing it reports)."""
    src = os.path.join(results, "capture")
    if not os.path.isdir(src):
        print(f"assert.py: {src}: the VM captured no tree", file=sys.stderr)
        return 1
    dropped_empty = dropped_zero = kept = 0
    for dirpath, dirs, files in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        out = os.path.join(dest, rel)
        os.makedirs(out, exist_ok=True)
        os.chmod(out, 0o755)
        for name in sorted(dirs + files):
            p = os.path.join(dirpath, name)
            q = os.path.join(out, name)
            if os.path.islink(p):
                if not os.path.lexists(q):
                    os.symlink(os.readlink(p), q)
                continue
            if not os.path.isfile(p):
                continue
            data = open(p, "rb").read()
            if not data:
                dropped_empty += 1
                continue
            if os.path.basename(dirpath) == "gids" and data.decode(errors="replace").strip() == ZERO_GID:
                dropped_zero += 1
                continue
            with open(q, "wb") as f:
                f.write(data)
            os.chmod(q, 0o644)
            kept += 1
    print(f"assert.py: fixture {dest}: {kept} files; left out {dropped_empty} unreadable (empty) "
          f"attributes and {dropped_zero} all-zero GID slots")
    return 0


def ratio_text(ours, anchor, unknown="n/a (perftest moved no data)"):
    """ours/anchor for the printed numbers, or why there is none: under a loaded TCG host
    perftest has completed 0 iterations (0 MB/s) and printed inf for latencies. The numbers are
    reported, never asserted, so a missing anchor must not fail the run."""
    if anchor != anchor or anchor in (0, float("inf")) or ours != ours:
        return unknown
    return f"{ours / anchor:.3f}"


def report_numbers(c):
    r = getattr(c, "rdma", {})
    if r.get("bw") and r.get("pt_bw"):
        fb, pb = sorted(r["bw"])[len(r["bw"]) // 2], sorted(r["pt_bw"])[len(r["pt_bw"]) // 2]
        print(f"  rdma 64 KiB WRITE bw, median of {len(r['bw'])} alternating runs: fabscope {fb:.2f} MiB/s, "
              f"ib_write_bw {pb:.2f} MiB/s, ratio {ratio_text(fb, pb)} (runs: fabscope {r['bw']}, perftest {r['pt_bw']})")
    if r.get("lat") and r.get("pt_lat"):
        fl, pl = sorted(r["lat"])[len(r["lat"]) // 2], sorted(r["pt_lat"])[len(r["pt_lat"]) // 2]
        ratio = ratio_text(fl, pl, "n/a (perftest's clock)")
        print(f"  rdma 8 B WRITE latency, median of {len(r['lat'])} alternating runs: fabscope {fl:.2f} us, "
              f"ib_write_lat t_typical {pl:.2f} us, ratio {ratio} (runs: fabscope {r['lat']}, perftest {r['pt_lat']})")
    if c.exists("timings.txt"):
        t = {k: float(v) for k, v in (l.split() for l in c.text("timings.txt").splitlines())}
        print("  times (VM uptime, s): " + ", ".join(f"{k} {v:.1f}" for k, v in t.items()))
    for name, r in c.perf.items():
        if name.endswith("_bw"):
            print(f"  {name}: {int(r[0])} B x {int(r[1])} iterations, average {r[3]:.2f} MB/s")
        else:
            note = " (perftest's CPU clock calibration failed under emulation)" if r[4] != r[4] or r[4] == float("inf") else ""
            print(f"  {name}: {int(r[0])} B x {int(r[1])} iterations, t_typical {r[4]:.2f} us, t_avg {r[5]:.2f} us{note}")


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "unpack":
        return unpack(sys.argv[2], sys.argv[3])
    if len(sys.argv) >= 4 and sys.argv[1] == "capture":
        return capture(sys.argv[2], sys.argv[3])
    if len(sys.argv) >= 3 and sys.argv[1] == "check":
        c = Checker(sys.argv[2])
        if c.exists("scenario.log"):
            tail = c.text("scenario.log").strip().splitlines()[-1:]
            c.ok(tail == ["scenario_rc=0"], "scenario ran to the end", f"last line {tail}")
        c.perf = {}
        c.rdma = {}
        for step in (check_basics, check_probe, check_check, check_env, check_traffic, check_rdma,
                     check_exporter, check_no_provider, check_capture, check_fabric):
            try:
                step(c)
            except (OSError, KeyError, ValueError, TypeError) as e:
                c.fail(f"{step.__name__}: could not judge: {type(e).__name__}: {e}")
        if c.exists("skipped.txt"):
            for line in c.text("skipped.txt").splitlines():
                c.skipped.append(line)
        for p in c.passed:
            print(f"  PASS {p}")
        for s in c.skipped:
            print(f"  SKIP {s}")
        for f in c.failed:
            print(f"  FAIL {f}")
        report_numbers(c)
        print(f"assert.py: {len(c.passed)} passed, {len(c.failed)} failed, {len(c.skipped)} skipped")
        return 1 if c.failed else 0
    print(__doc__, file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
